// The merchant's lifecycle on the localnet (the compiled program): merchant init twice at once and again through
// the real `oncepay` binary → one account; show / pause / unpause / set-payout-authority; keypair files open to
// others refused; vault create under SPL Token and Token-2022; vault check on every risky mint and vault. The CLI
// calls the same OncePay methods, so most cases call them in-process (a CLI start costs seconds of CPU).
import { expect } from 'chai';
import * as fs from 'fs';
import { Connection, Keypair, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  AccountState,
  AuthorityType,
  ExtensionType,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  createApproveInstruction,
  createInitializeAccount3Instruction,
  createInitializeDefaultAccountStateInstruction,
  createInitializePermanentDelegateInstruction,
  createInitializeTransferFeeConfigInstruction,
  createInitializeTransferHookInstruction,
  createSetAuthorityInstruction,
  getAssociatedTokenAddressSync,
  unpackAccount,
} from '@solana/spl-token';
import { TestNode } from '../../testkit/node';
import { merchantAddress } from '../../app/merchant/instructions';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { send } from '../../testkit/cluster';
import { createTestDb, TestDb } from '../../testkit/test-db';
import { OncePay, readKeypairFile } from '../../sdk';
import { Keys, cli, createMint, errorCode, fundedKeypair, startNet } from './helpers';

/** What `merchant init|pause --json` prints: the fields these tests read. */
type MerchantOut = {
  merchant: string;
  matches: boolean;
  created: boolean;
  signature: string | null;
  account: { payoutAuthority: string; paused: boolean };
};

describe('sdk: merchant lifecycle and vaults on the localnet (oncepay merchant … / vault …)', function () {
  this.timeout(300_000); // each `oncepay` child compiles the CLI from source: seconds of CPU on a shared machine
  let net: TestNode;
  let connection: Connection;
  let db: TestDb;
  const keys = new Keys();
  let authority: Keypair;
  let authorityFile: string;
  let merchant: PublicKey;
  let env: Record<string, string>;
  let op: OncePay;
  const rpc = () => ['--rpc', net.url, '--poll-ms', '20', '--json'];

  before(async () => {
    ({ net, connection } = await startNet());
    db = await createTestDb('sdk_lifecycle');
    env = db.env;
    authority = await fundedKeypair(connection);
    authorityFile = keys.file(authority, 'authority');
    merchant = merchantAddress(new PublicKey(ONCEPAY_PROGRAM_ID), authority.publicKey).merchant;
    op = OncePay.connect({ databaseUrl: db.url, schema: db.schema, rpcUrl: net.url, pollIntervalMs: 20 });
  });
  after(async () => {
    await op?.close();
    await db?.drop();
    await net?.stop();
    keys.remove();
  });

  describe('merchant', () => {
    it('init twice at once, then again: one account, created once; the others report it and whether it matches', async () => {
      const payoutAuthority = Keypair.generate().publicKey.toBase58();
      const args = ['merchant', 'init', '--authority', authorityFile, '--payout-authority', payoutAuthority, ...rpc()];
      const [a, b] = await Promise.all([cli<MerchantOut>(args, env), cli<MerchantOut>(args, env)]);
      for (const r of [a, b]) {
        expect(r.code, r.stderr).to.equal(0);
        expect(r.json.merchant).to.equal(merchant.toBase58());
        expect(r.json.matches).to.equal(true);
        expect(r.json.account).to.deep.include({
          merchantAuthority: authority.publicKey.toBase58(),
          payoutAuthority,
          paused: false,
        });
      }
      // One transaction created it. Both may say `created` only when they sent the very same signed transaction
      // (same blockhash: on a real validator's 400 ms slots both fetch one), which the node ran once.
      const creators = [a, b].filter((r) => r.json.created);
      expect(creators.length, 'one of them created it').to.be.greaterThan(0);
      expect(new Set(creators.map((r) => r.json.signature)).size, 'the same creating transaction').to.equal(1);
      const history = await connection.getSignaturesForAddress(merchant);
      expect(history.filter((h) => h.err === null).map((h) => h.signature)).to.deep.equal([creators[0].json.signature]);

      // Again, and asked with another payout authority: reported, not changed (exit 3 for the mismatch).
      const [again, other] = await Promise.all([
        cli<MerchantOut>(args, env),
        cli<MerchantOut>(
          [
            'merchant',
            'init',
            '--authority',
            authorityFile,
            '--payout-authority',
            Keypair.generate().publicKey.toBase58(),
            ...rpc(),
          ],
          env,
        ),
      ]);
      expect(again.code, again.stderr).to.equal(0);
      expect(again.json).to.deep.include({ created: false, matches: true, signature: null });
      expect(other.code).to.equal(3);
      expect(other.json).to.deep.include({ created: false, matches: false });
      expect(other.json.account.payoutAuthority).to.equal(payoutAuthority);

      const info = await connection.getAccountInfo(merchant);
      expect(info!.owner.toBase58()).to.equal(ONCEPAY_PROGRAM_ID);
      const sigs = await connection.getSignaturesForAddress(merchant, { limit: 100 }, 'confirmed');
      expect(sigs.filter((s) => s.err === null)).to.have.length(1); // one initialize_merchant landed
    });

    it('show, pause (twice: the second changes nothing), unpause, set-payout-authority', async () => {
      expect((await op.getMerchant(merchant))!.paused).to.equal(false);
      const p1 = await cli<MerchantOut>(['merchant', 'pause', '--authority', authorityFile, ...rpc()], env);
      expect(p1.code, p1.stderr).to.equal(0);
      expect(p1.json).to.deep.include({ changed: true });
      expect(p1.json.account.paused).to.equal(true);
      const p2 = await op.setPaused(authority, true);
      expect(p2).to.deep.include({ changed: false, signature: null });
      expect((await op.getMerchant(merchant))!.paused).to.equal(true);

      const u = await op.setPaused(authority, false);
      expect(u.changed).to.equal(true);
      expect(u.account.paused).to.equal(false);

      const next = Keypair.generate().publicKey.toBase58();
      const s = await op.setPayoutAuthority(authority, next);
      expect(s.changed).to.equal(true);
      expect(await op.getMerchant(merchant)).to.deep.include({
        payoutAuthority: next,
        paused: false,
        merchantAuthority: authority.publicKey.toBase58(),
      });
    });

    it('pause by a key that is not the merchant authority: refused before anything is sent', async () => {
      const stranger = await fundedKeypair(connection);
      // Its own PDA holds no config: nothing to pause, and nothing is sent.
      const e = await op.setPaused(stranger, true).then(
        () => null,
        (x: { code?: string }) => x,
      );
      expect(e?.code).to.equal('ONCEPAY__MERCHANT__NOT_INITIALIZED');
    });

    it('a keypair file readable by group or others is refused, and its bytes never reach the output', async () => {
      const loose = keys.file(authority, 'loose', 0o644);
      const r = await cli(
        ['merchant', 'init', '--authority', loose, '--payout-authority', authority.publicKey.toBase58(), ...rpc()],
        env,
      );
      expect(r.code).to.equal(1);
      expect(errorCode(r)).to.equal('ONCEPAY__KEYPAIR__PERMISSIONS_TOO_OPEN');
      const secret = JSON.stringify([...authority.secretKey]).slice(1, 40);
      expect(r.stderr + r.stdout).to.not.contain(secret);
      const garbage = keys.file(authority, 'garbage');
      fs.writeFileSync(garbage, `[${[...authority.secretKey].join(',')}`, { mode: 0o600 }); // truncated JSON
      const g = (() => {
        try {
          readKeypairFile(garbage);
          return null;
        } catch (e) {
          return e as { code: string; message: string };
        }
      })();
      expect(g?.code).to.equal('ONCEPAY__PAYOUT__KEYPAIR_MALFORMED');
      expect(g?.message).to.not.contain(secret.slice(0, 12)); // the JSON parser's message would quote the bytes
      expect(readKeypairFile(keys.file(authority, 'tight')).publicKey.toBase58()).to.equal(
        authority.publicKey.toBase58(),
      );
    });
  });

  describe('vault', () => {
    const create = (mint: PublicKey) => op.createVault({ payer: authority, merchant, mint });
    const check = (o: { mint?: PublicKey; vault?: PublicKey }) => op.checkVault({ merchant, ...o });
    const codes = (r: { findings: Array<{ code: string }> }) => r.findings.map((f) => f.code).sort();
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (x: { code?: string }) => x.code,
      );

    for (const token2022 of [false, true]) {
      it(`create (${token2022 ? 'Token-2022' : 'SPL Token'}): the merchant PDA's associated token account, idempotent; a plain mint checks clean`, async () => {
        const mint = await createMint(connection, authority, { token2022 });
        const program = token2022 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID;
        // Token-2022 through the CLI (the same OncePay.createVault).
        const r = token2022
          ? (
              await cli(
                [
                  'vault',
                  'create',
                  '--merchant',
                  merchant.toBase58(),
                  '--mint',
                  mint.toBase58(),
                  '--payer',
                  authorityFile,
                  ...rpc(),
                ],
                env,
              )
            ).json
          : await create(mint);
        const ata = getAssociatedTokenAddressSync(mint, merchant, true, program);
        expect(r).to.deep.include({ vault: ata.toBase58(), tokenProgram: program.toBase58(), created: true });
        const info = await connection.getAccountInfo(ata);
        const acct = unpackAccount(ata, info, program);
        expect(acct.owner.toBase58()).to.equal(merchant.toBase58());
        expect(acct.mint.toBase58()).to.equal(mint.toBase58());
        expect(await create(mint)).to.deep.include({ vault: ata.toBase58(), created: false, signature: null });
        const c = await check({ mint });
        expect(c).to.deep.include({ vault: ata.toBase58(), ok: true, findings: [], balance: 0n });
      });
    }

    const risky: Array<{ name: string; make: () => Promise<PublicKey>; want: string[]; danger: boolean }> = [
      {
        name: 'permanent delegate',
        make: () =>
          createMint(connection, authority, {
            token2022: true,
            extensions: [ExtensionType.PermanentDelegate],
            extensionIxs: (m) => [
              createInitializePermanentDelegateInstruction(m, Keypair.generate().publicKey, TOKEN_2022_PROGRAM_ID),
            ],
          }),
        want: ['MINT_PERMANENT_DELEGATE'],
        danger: true,
      },
      {
        name: 'transfer fee',
        make: () =>
          createMint(connection, authority, {
            token2022: true,
            extensions: [ExtensionType.TransferFeeConfig],
            extensionIxs: (m) => [
              createInitializeTransferFeeConfigInstruction(
                m,
                authority.publicKey,
                authority.publicKey,
                150,
                1_000_000n,
                TOKEN_2022_PROGRAM_ID,
              ),
            ],
          }),
        want: ['MINT_TRANSFER_FEE'],
        danger: false,
      },
      {
        name: 'transfer hook',
        make: () =>
          createMint(connection, authority, {
            token2022: true,
            extensions: [ExtensionType.TransferHook],
            extensionIxs: (m) => [
              createInitializeTransferHookInstruction(
                m,
                authority.publicKey,
                Keypair.generate().publicKey,
                TOKEN_2022_PROGRAM_ID,
              ),
            ],
          }),
        want: ['MINT_TRANSFER_HOOK'],
        danger: true,
      },
      {
        name: 'default-frozen accounts (and so a freeze authority; the new vault starts frozen)',
        make: () =>
          createMint(connection, authority, {
            token2022: true,
            extensions: [ExtensionType.DefaultAccountState],
            extensionIxs: (m) => [
              createInitializeDefaultAccountStateInstruction(m, AccountState.Frozen, TOKEN_2022_PROGRAM_ID),
            ],
            freezeAuthority: authority.publicKey,
          }),
        want: ['MINT_DEFAULT_FROZEN', 'MINT_FREEZE_AUTHORITY', 'VAULT_FROZEN'],
        danger: true,
      },
      {
        name: 'freeze authority (SPL Token)',
        make: () => createMint(connection, authority, { freezeAuthority: Keypair.generate().publicKey }),
        want: ['MINT_FREEZE_AUTHORITY'],
        danger: false,
      },
    ];
    for (const k of risky) {
      it(`check flags a mint with ${k.name}: ${k.want.join(', ')}`, async () => {
        const mint = await k.make();
        expect((await create(mint)).created).to.equal(true);
        const r = await check({ mint });
        expect(codes(r)).to.deep.equal([...k.want].sort());
        expect(r.ok).to.equal(!k.danger);
        for (const f of r.findings) expect(f.meaning).to.be.a('string').with.length.above(0);
      });
    }

    /** A token account of a fresh mint owned by `authority`, then `then` (approve, set authorities…) in the same transaction. */
    async function tokenAccount(then: (acct: PublicKey) => TransactionInstruction[]): Promise<PublicKey> {
      const mint = await createMint(connection, authority);
      const acct = Keypair.generate();
      await send(
        connection,
        [
          SystemProgram.createAccount({
            fromPubkey: authority.publicKey,
            newAccountPubkey: acct.publicKey,
            lamports: await connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE),
            space: ACCOUNT_SIZE,
            programId: TOKEN_PROGRAM_ID,
          }),
          createInitializeAccount3Instruction(acct.publicKey, mint, authority.publicKey),
          ...then(acct.publicKey),
        ],
        [authority, acct],
      );
      return acct.publicKey;
    }

    it('check flags a vault with a delegate (and an owner that is not the merchant PDA)', async () => {
      const delegate = Keypair.generate().publicKey;
      const acct = await tokenAccount((a) => [createApproveInstruction(a, delegate, authority.publicKey, 5_000n)]);
      // Through the CLI: a danger exits 2.
      const r = await cli<{ findings: Array<{ code: string; holder?: string }> }>(
        ['vault', 'check', '--merchant', merchant.toBase58(), '--vault', acct.toBase58(), ...rpc()],
        env,
      );
      expect(r.code, r.stderr).to.equal(2);
      expect(codes(r.json)).to.deep.equal(['VAULT_DELEGATE', 'VAULT_OWNER_NOT_MERCHANT']);
      expect(r.json.findings.find((f) => f.code === 'VAULT_DELEGATE')!.holder).to.equal(delegate.toBase58());
    });

    it('check flags a vault with a close authority (handed to the merchant PDA afterwards: the close authority stays)', async () => {
      const closer = Keypair.generate().publicKey;
      const acct = await tokenAccount((a) => [
        createSetAuthorityInstruction(a, authority.publicKey, AuthorityType.CloseAccount, closer),
        createSetAuthorityInstruction(a, authority.publicKey, AuthorityType.AccountOwner, merchant),
      ]);
      const r = await check({ vault: acct });
      expect(r.ok).to.equal(true); // a warning, not a danger
      expect(codes(r)).to.deep.equal(['VAULT_CLOSE_AUTHORITY']);
      expect(r.findings[0].holder).to.equal(closer.toBase58());
    });

    it('check of an address without an account, and create with a mint that is not one: codes', async () => {
      expect(await failure(check({ vault: Keypair.generate().publicKey }))).to.equal('ONCEPAY__VAULT__NOT_FOUND');
      expect(await failure(create(authority.publicKey))).to.equal('ONCEPAY__VAULT__MINT_INVALID');
    });
  });
});
