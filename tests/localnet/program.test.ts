// The compiled oncepay programs on a node (the suite's localnet, or the node ANCHOR_PROVIDER_URL names: testkit/node),
// driven by @coral-xyz/anchor's Program, and what the indexer's decoder reads back from the node's getTransaction.
// Both binaries run, each at its own id: the Anchor program at the canonical id, the lean twin at a second one.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { AnchorError, AnchorProvider, BN, Idl, Program, Wallet } from '@coral-xyz/anchor';
import { Connection, Keypair, PublicKey, SystemProgram } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  TOKEN_PROGRAM_ID,
  createInitializeAccount3Instruction,
  createMintToInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  createAssociatedTokenAccountIdempotentInstruction,
} from '@solana/spl-token';
import { bothPrograms, startTestNode, TestNode, testProgramIds } from '../../testkit/node';
import { decodeTransaction, TOP_LEVEL } from '../../indexer/decode';
import { funded, mintWithBalance, rpc, send, until } from './support';

const ROOT = path.resolve(__dirname, '../..');
const idl = JSON.parse(fs.readFileSync(path.join(ROOT, 'idl/oncepay.json'), 'utf8')) as Idl;

describe('localnet: oncepay programs through @coral-xyz/anchor', function () {
  let net: TestNode;
  let conn: Connection;
  let authority: Keypair;

  before(async function () {
    net = await startTestNode({ slotMs: 20, finalityDepth: 2, programs: bothPrograms() });
    conn = net.connection();
    authority = await funded(conn, 100);
  });
  after(async () => {
    await net.stop();
  });

  const ids = testProgramIds();
  for (const [binary, ONCEPAY_PROGRAM_ID] of [
    ['anchor', ids.anchor],
    ['lite', ids.lite],
  ] as const)
    it(`${binary} at ${ONCEPAY_PROGRAM_ID}: executePayout(...).rpc() pays once; the second attempt fails with 6000 (preflight and landed); the decoder finds the CPI transfer`, async () => {
      const program = new Program(
        { ...idl, address: ONCEPAY_PROGRAM_ID },
        new AnchorProvider(conn, new Wallet(authority), { commitment: 'confirmed' }),
      );
      const programId = new PublicKey(ONCEPAY_PROGRAM_ID);
      const [merchant, merchantBump] = PublicKey.findProgramAddressSync(
        [Buffer.from('merchant'), authority.publicKey.toBuffer()],
        programId,
      );
      await program.methods
        .initializeMerchant(authority.publicKey, merchantBump)
        .accountsPartial({
          merchantAuthority: authority.publicKey,
          payer: authority.publicKey,
          merchant,
          systemProgram: SystemProgram.programId,
        })
        .rpc();

      // A mint (authority = our key) and a vault token account owned by the merchant PDA, funded.
      const t = await mintWithBalance(conn, authority, 0n);
      const vault = Keypair.generate();
      await send(
        conn,
        authority,
        [
          SystemProgram.createAccount({
            fromPubkey: authority.publicKey,
            newAccountPubkey: vault.publicKey,
            lamports: await conn.getMinimumBalanceForRentExemption(ACCOUNT_SIZE),
            space: ACCOUNT_SIZE,
            programId: TOKEN_PROGRAM_ID,
          }),
          createInitializeAccount3Instruction(vault.publicKey, t.mint, merchant),
          createMintToInstruction(t.mint, vault.publicKey, authority.publicKey, 10_000_000n),
        ],
        [vault],
      );
      const bob = Keypair.generate().publicKey;
      const bobAta = getAssociatedTokenAddressSync(t.mint, bob);
      await send(conn, authority, [
        createAssociatedTokenAccountIdempotentInstruction(authority.publicKey, bobAta, bob, t.mint),
      ]);

      const opId = Buffer.alloc(32, 7);
      const [operation, opBump] = PublicKey.findProgramAddressSync(
        [Buffer.from('op'), merchant.toBuffer(), opId],
        programId,
      );
      const accounts = {
        payoutAuthority: authority.publicKey,
        payer: authority.publicKey,
        merchant,
        operation,
        vault: vault.publicKey,
        mint: t.mint,
        recipientToken: bobAta,
        tokenProgram: TOKEN_PROGRAM_ID,
        systemProgram: SystemProgram.programId,
      };
      const sig = await program.methods
        .executePayout([...opId], new BN('2500000'), opBump)
        .accountsPartial(accounts)
        .rpc();
      expect((await conn.getTokenAccountBalance(bobAta)).value.amount).to.equal('2500000');
      expect((await conn.getTokenAccountBalance(vault.publicKey)).value.amount).to.equal('7500000');

      // Second attempt of the same op, refused at preflight. Both program binaries log the failure as Anchor does
      // ("AnchorError caused by account: operation. Error Code: OperationAlreadyConsumed. Error Number: 6000. …"), so
      // Anchor's client turns the node's -32002 into an AnchorError that names it.
      let err: unknown;
      try {
        await program.methods
          .executePayout([...opId], new BN('2500000'), opBump)
          .accountsPartial(accounts)
          .rpc();
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(AnchorError);
      const anchorError = err as AnchorError;
      expect(anchorError.error.errorCode).to.deep.equal({ code: 'OperationAlreadyConsumed', number: 6000 });
      expect(anchorError.error.origin).to.equal('operation');
      expect(anchorError.program.toBase58()).to.equal(ONCEPAY_PROGRAM_ID);
      const logs = anchorError.logs;
      expect(logs[logs.length - 1]).to.equal(`Program ${ONCEPAY_PROGRAM_ID} failed: custom program error: 0x1770`);
      const named = (idl.errors ?? []).find((e) => e.code === 0x1770);
      expect(named?.name).to.equal('OperationAlreadyConsumed');
      // Sent without preflight it lands, fee paid, with the program's error in the RPC shape.
      const tx = await program.methods
        .executePayout([...opId], new BN('2500000'), opBump)
        .accountsPartial(accounts)
        .transaction();
      const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
      tx.recentBlockhash = blockhash;
      tx.lastValidBlockHeight = lastValidBlockHeight;
      tx.feePayer = authority.publicKey;
      tx.sign(authority);
      const failedSig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      const failed = await until(
        'failed payout landed',
        () => conn.getTransaction(failedSig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }),
        net.wait(10_000) / 25,
      );
      expect(failed.meta!.err).to.deep.equal({ InstructionError: [0, { Custom: 6000 }] });
      expect(failed.meta!.fee).to.equal(5000);
      expect((await conn.getTokenAccountBalance(bobAta)).value.amount).to.equal('2500000');

      // The localnet's getTransaction, decoded by the indexer: one receipt, the inner transferChecked.
      const raw = await rpc<{
        slot: number;
        meta: {
          innerInstructions: Array<{
            index: number;
            instructions: Array<{ programIdIndex: number; stackHeight: number }>;
          }>;
        };
        transaction: { message: { accountKeys: string[] } };
      }>(net.url, 'getTransaction', [
        sig,
        { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' },
      ]);
      const receipts = decodeTransaction(raw.result);
      expect(receipts).to.have.length(1);
      const r = receipts[0];
      const group = raw.result!.meta.innerInstructions.find((g) => g.index === r.ixIndex)!;
      const keys = raw.result!.transaction.message.accountKeys;
      expect(keys[group.instructions[r.innerIndex].programIdIndex]).to.equal(TOKEN_PROGRAM_ID.toBase58());
      expect(group.instructions[r.innerIndex].stackHeight).to.equal(2);
      expect(r).to.deep.include({
        signature: sig,
        ixIndex: 0,
        program: 'spl-token',
        kind: 'transferChecked',
        mint: t.mint.toBase58(),
        source: vault.publicKey.toBase58(),
        destination: bobAta.toBase58(),
        destinationOwner: bob.toBase58(),
        amount: 2_500_000n,
      });
      expect(r.innerIndex).to.not.equal(TOP_LEVEL);
      expect(r.slot).to.equal(BigInt(raw.result!.slot));
    });

  it('the decoder reads the same receipts from json, jsonParsed and base64 getTransaction and from getBlock', async () => {
    const payer = await funded(conn, 10);
    const t = await mintWithBalance(conn, payer, 9_000_000n);
    const bob = Keypair.generate().publicKey;
    const bobAta = getAssociatedTokenAddressSync(t.mint, bob);
    const sig = await send(conn, payer, [
      createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, bobAta, bob, t.mint),
      createTransferCheckedInstruction(t.ata, t.mint, bobAta, payer.publicKey, 1_000_001n, 6),
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: bob, lamports: 1_000_000 }),
    ]);
    const views = await Promise.all(
      ['json', 'jsonParsed', 'base64'].map(async (encoding) =>
        decodeTransaction(
          (
            await rpc(net.url, 'getTransaction', [
              sig,
              { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding },
            ])
          ).result,
        ),
      ),
    );
    const shape = (rs: ReturnType<typeof decodeTransaction>) =>
      rs.map((r) => ({
        ixIndex: r.ixIndex,
        innerIndex: r.innerIndex,
        kind: r.kind,
        mint: r.mint,
        destination: r.destination,
        destinationOwner: r.destinationOwner,
        amount: r.amount,
      }));
    const expected = [
      {
        ixIndex: 1,
        innerIndex: TOP_LEVEL,
        kind: 'transferChecked',
        mint: t.mint.toBase58(),
        destination: bobAta.toBase58(),
        destinationOwner: bob.toBase58(),
        amount: 1_000_001n,
      },
      {
        ixIndex: 2,
        innerIndex: TOP_LEVEL,
        kind: 'systemTransfer',
        mint: 'SOL',
        destination: bob.toBase58(),
        destinationOwner: bob.toBase58(),
        amount: 1_000_000n,
      },
    ];
    for (const v of views) expect(shape(v)).to.deep.equal(expected);
    const st = (await conn.getSignatureStatus(sig)).value!;
    const block = await rpc(net.url, 'getBlock', [
      st.slot,
      { commitment: 'confirmed', maxSupportedTransactionVersion: 0 },
    ]);
    const { decodeBlock } = await import('../../indexer/decode');
    const fromBlock = decodeBlock(block.result, { slot: st.slot }).filter((r) => r.signature === sig);
    expect(shape(fromBlock)).to.deep.equal(expected);
  });
});
