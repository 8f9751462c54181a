// The SDK's pure parts, without I/O: instruction builders and the merchant account against the IDL (encoded by
// anchor's own coder), refund ids and terms, and what vault check concludes from decoded token state.
import { expect } from 'chai';
import { BorshCoder, Idl } from '@coral-xyz/anchor';
import { Keypair, PublicKey } from '@solana/web3.js';
import { Account, AccountState, ExtensionType, Mint, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import { decodeMerchantAccount, MERCHANT_ACCOUNT_LEN } from '../../app/merchant/account';
import { merchantAddress, setPausedInstruction, setPayoutAuthorityInstruction } from '../../app/merchant/instructions';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { refundTerms } from '../../app/exception/refund';
import { refundPayoutId } from '../../app/exception/refund-id';
import { ExceptionRow } from '../../app/exception/types';
import { assessMint, assessVault } from '../../app/vault/assess';
import { isPayoutId } from '../../app/types';
import { buildCli } from '../../cli/main';
import idlJson from '../../idl/oncepay.json';

const idl = idlJson as Idl;
const coder = new BorshCoder(idl);
const programId = new PublicKey(ONCEPAY_PROGRAM_ID);
const k = () => Keypair.generate().publicKey;

describe('sdk pure parts', () => {
  describe('program interface agrees with idl/oncepay.json', () => {
    for (const [name, build, args] of [
      ['set_paused', (a: PublicKey) => setPausedInstruction(programId, a, true), { paused: true }],
      ['set_payout_authority', (a: PublicKey, n: PublicKey) => setPayoutAuthorityInstruction(programId, a, n), null],
    ] as const) {
      it(`encodes ${name} as anchor does, accounts in the IDL order and flags`, () => {
        const authority = k();
        const next = k();
        const ix = (build as (a: PublicKey, n: PublicKey) => ReturnType<typeof setPausedInstruction>)(authority, next);
        const theirs = coder.instruction.encode(name, args ?? { new_payout_authority: next });
        expect(ix.data.toString('hex')).to.equal(Buffer.from(theirs).toString('hex'));
        const spec = idl.instructions.find((i) => i.name === name)!.accounts as Array<{
          signer?: boolean;
          writable?: boolean;
        }>;
        expect(ix.keys.map((a) => [a.isSigner, a.isWritable])).to.deep.equal(
          spec.map((a) => [!!a.signer, !!a.writable]),
        );
        expect(ix.keys[1].pubkey.toBase58()).to.equal(merchantAddress(programId, authority).merchant.toBase58());
      });
    }

    it('decodes the Merchant account as anchor encodes it, and refuses anything else', async () => {
      const fields = { merchant_authority: k(), payout_authority: k(), paused: true, bump: 251 };
      const buf = await coder.accounts.encode('Merchant', fields as never);
      expect(buf.length).to.equal(MERCHANT_ACCOUNT_LEN);
      const addr = k().toBase58();
      expect(decodeMerchantAccount(addr, buf)).to.deep.equal({
        address: addr,
        merchantAuthority: fields.merchant_authority.toBase58(),
        payoutAuthority: fields.payout_authority.toBase58(),
        paused: true,
        bump: 251,
      });
      const wrong = Buffer.from(buf);
      wrong[0] ^= 1;
      expect(() => decodeMerchantAccount(addr, wrong))
        .to.throw()
        .with.property('code', 'ONCEPAY__MERCHANT__ACCOUNT_MALFORMED');
      expect(() => decodeMerchantAccount(addr, buf.subarray(0, 40)))
        .to.throw()
        .with.property('code', 'ONCEPAY__MERCHANT__ACCOUNT_MALFORMED');
    });
  });

  describe('refunds', () => {
    const sig = '5'.repeat(88);
    const e = (o: Partial<ExceptionRow['receipt']> = {}, amount = 500n): ExceptionRow => ({
      id: '7',
      kind: 'overpayment',
      invoiceId: 'INV-1',
      amount,
      detail: null,
      createdAt: new Date(0),
      state: 'open',
      resolution: null,
      receipt: {
        cluster: 'mainnet-beta',
        signature: sig,
        ixIndex: 2,
        innerIndex: -1,
        slot: 1n,
        mint: k().toBase58(),
        source: k().toBase58(),
        destination: k().toBase58(),
        destinationOwner: null,
        ...o,
      },
    });

    it('the payout id is the receipt key (fits a payout id: ≤ 200 bytes for the longest signature)', () => {
      const id = refundPayoutId(e().receipt);
      expect(id).to.equal(`refund:mainnet-beta:${sig}:2:-1`);
      expect(isPayoutId(id)).to.equal(true);
    });

    it("pays the exception's amount (bigint, beyond 2^53) in the receipt's mint back to the source, or to `to`", () => {
      const x = e({}, 18446744073709551615n);
      expect(refundTerms(x)).to.deep.equal({
        payoutId: refundPayoutId(x.receipt),
        recipient: x.receipt.source,
        mint: x.receipt.mint,
        amount: 18446744073709551615n,
      });
      const to = k().toBase58();
      expect(refundTerms(x, to).recipient).to.equal(to);
      expect(() => refundTerms(x, 'not-an-address'))
        .to.throw()
        .with.property('code', 'ONCEPAY__PAYOUT__ADDRESS_MALFORMED');
    });

    it('native SOL and unknown mints are refused with a code (the program moves SPL tokens only)', () => {
      for (const mint of ['SOL', null])
        expect(() => refundTerms(e({ mint })))
          .to.throw()
          .with.property('code', 'ONCEPAY__EXCEPTION__REFUND_UNSUPPORTED');
    });
  });

  describe('vault check (decoded state → findings)', () => {
    const merchant = k();
    const mint = (o: Partial<Mint> = {}): Mint => ({
      address: k(),
      mintAuthority: null,
      supply: 0n,
      decimals: 6,
      isInitialized: true,
      freezeAuthority: null,
      tlvData: Buffer.alloc(0),
      ...o,
    });
    const account = (m: Mint, o: Partial<Account> = {}): Account => ({
      address: k(),
      mint: m.address,
      owner: merchant,
      amount: 0n,
      delegate: null,
      delegatedAmount: 0n,
      isInitialized: true,
      isFrozen: false,
      isNative: false,
      rentExemptReserve: null,
      closeAuthority: null,
      tlvData: Buffer.alloc(0),
      ...o,
    });
    const codes = (f: Array<{ code: string }>) => f.map((x) => x.code).sort();
    /** Token-2022 TLV: type u16 LE ‖ length u16 LE ‖ value. */
    const tlv = (type: ExtensionType, value: Buffer) =>
      Buffer.concat([Buffer.from([type & 0xff, type >> 8, value.length & 0xff, value.length >> 8]), value]);

    it('a plain mint and a vault owned by the merchant PDA: nothing to say', () => {
      const m = mint();
      expect(assessVault(account(m), m, merchant)).to.deep.equal([]);
    });

    it('vault: delegate with an allowance, close authority, frozen, another owner, another mint', () => {
      const m = mint();
      expect(
        codes(
          assessVault(
            account(m, { delegate: k(), delegatedAmount: 1n, closeAuthority: k(), isFrozen: true }),
            m,
            merchant,
          ),
        ),
      ).to.deep.equal(['VAULT_CLOSE_AUTHORITY', 'VAULT_DELEGATE', 'VAULT_FROZEN']);
      // A delegate whose allowance is spent can move nothing.
      expect(assessVault(account(m, { delegate: k(), delegatedAmount: 0n }), m, merchant)).to.deep.equal([]);
      expect(codes(assessVault(account(m, { owner: k(), mint: k() }), m, merchant))).to.deep.equal([
        'VAULT_MINT_MISMATCH',
        'VAULT_OWNER_NOT_MERCHANT',
      ]);
    });

    it('mint: permanent delegate, transfer hook (a default hook program id means none), default frozen, freeze authority, non-transferable', () => {
      const delegate = k();
      const hook = Buffer.concat([k().toBuffer(), k().toBuffer()]); // authority ‖ program id
      const noHook = Buffer.concat([k().toBuffer(), PublicKey.default.toBuffer()]);
      const m = mint({
        freezeAuthority: k(),
        tlvData: Buffer.concat([
          tlv(ExtensionType.PermanentDelegate, delegate.toBuffer()),
          tlv(ExtensionType.TransferHook, hook),
          tlv(ExtensionType.DefaultAccountState, Buffer.from([AccountState.Frozen])),
          tlv(ExtensionType.NonTransferable, Buffer.alloc(0)),
        ]),
      });
      const f = assessMint(m);
      expect(codes(f)).to.deep.equal([
        'MINT_DEFAULT_FROZEN',
        'MINT_FREEZE_AUTHORITY',
        'MINT_NON_TRANSFERABLE',
        'MINT_PERMANENT_DELEGATE',
        'MINT_TRANSFER_HOOK',
      ]);
      expect(f.find((x) => x.code === 'MINT_PERMANENT_DELEGATE')!.holder).to.equal(delegate.toBase58());
      expect(assessMint(mint({ tlvData: tlv(ExtensionType.TransferHook, noHook) }))).to.deep.equal([]);
      expect(
        assessMint(mint({ tlvData: tlv(ExtensionType.DefaultAccountState, Buffer.from([AccountState.Initialized])) })),
      ).to.deep.equal([]);
      expect(TOKEN_2022_PROGRAM_ID).to.be.instanceOf(PublicKey);
    });
  });

  it('every merchant, vault and exception command has a description and --help', () => {
    const want: Record<string, string[]> = {
      merchant: ['init', 'pause', 'set-payout-authority', 'show', 'unpause'],
      vault: ['check', 'create'],
      exception: ['list', 'refund', 'resolve', 'show'],
    };
    for (const [group, names] of Object.entries(want)) {
      const g = buildCli().commands.find((c) => c.name() === group)!;
      expect(g.commands.map((c) => c.name()).sort()).to.deep.equal(names);
      for (const c of g.commands) {
        expect(c.description(), `${group} ${c.name()}`).to.not.equal('');
        expect(c.helpInformation()).to.contain('--help');
      }
    }
  });
});
