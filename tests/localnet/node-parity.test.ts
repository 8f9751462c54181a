// Where a real solana-test-validator 3.1 differs from a lax RPC, localnet answers as the node does (issue 13):
// preflight and simulation at a commitment (default finalized), the -32002 and simulation result shapes,
// meta.costUnits, top-level stackHeight 1, a zero token balance's uiAmount null, confirmations, getVersion.
import { expect } from 'chai';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  SendTransactionError,
  SystemProgram,
  Transaction,
} from '@solana/web3.js';
import {
  MINT_SIZE,
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import bs58 from 'bs58';
import { LocalnetHandle, startLocalnet } from '../../localnet';
import { mintAccountInstructions } from '../../testkit/cluster';
import { connect, rpc } from './support';

/** Agave 3.1's RpcSimulateTransactionResult: every field, present even when null. */
const SIMULATION_FIELDS = [
  'accounts',
  'err',
  'fee',
  'innerInstructions',
  'loadedAccountsDataSize',
  'loadedAddresses',
  'logs',
  'postBalances',
  'postTokenBalances',
  'preBalances',
  'preTokenBalances',
  'replacementBlockhash',
  'returnData',
  'unitsConsumed',
];

type Simulation = {
  err: unknown;
  fee: number | null;
  loadedAccountsDataSize: number;
  loadedAddresses: { writable: string[]; readonly: string[] } | null;
  preBalances: number[] | null;
  postBalances: number[] | null;
  preTokenBalances: unknown[] | null;
  postTokenBalances: unknown[] | null;
  unitsConsumed: number;
};

describe('localnet: answers as a 3.1 validator does', function () {
  let net: LocalnetHandle;
  let conn: Connection;
  let payer: Keypair;

  /** Seal blocks until everything sealed so far is finalized (finalityDepth 2). */
  const finalizeAll = (): void => net.advanceSlots(3);

  before(async () => {
    net = await startLocalnet({ slotMs: 0, finalityDepth: 2, wsOnNextPort: false });
    conn = connect(net);
    payer = Keypair.generate();
    await conn.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
    finalizeAll();
  });
  after(async () => {
    await net.stop();
  });

  const transfer = (blockhash: string, lamports = LAMPORTS_PER_SOL / 100): Transaction => {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
    );
    tx.sign(payer);
    return tx;
  };
  const send = (tx: Transaction, config: Record<string, unknown> = {}) =>
    rpc<string, Simulation & Record<string, unknown>>(net.url, 'sendTransaction', [
      tx.serialize().toString('base64'),
      { encoding: 'base64', ...config },
    ]);

  it('preflight runs at preflightCommitment, default finalized: a confirmed-only blockhash is "Blockhash not found"', async () => {
    net.advanceSlots(1);
    const { blockhash } = await conn.getLatestBlockhash('confirmed');
    expect((await conn.isBlockhashValid(blockhash, { commitment: 'confirmed' })).value).to.equal(true);
    expect((await conn.isBlockhashValid(blockhash, { commitment: 'finalized' })).value).to.equal(false);

    const refused = await send(transfer(blockhash));
    expect(refused.error!.code).to.equal(-32002);
    expect(refused.error!.message).to.equal('Transaction simulation failed: Blockhash not found');
    // The node's shape: the simulation's fields, the ones it does not fill null.
    expect(Object.keys(refused.error!.data!).sort()).to.deep.equal(SIMULATION_FIELDS);
    expect(refused.error!.data).to.deep.include({
      err: 'BlockhashNotFound',
      fee: null,
      loadedAccountsDataSize: 0,
      loadedAddresses: null,
      logs: [],
      preBalances: null,
      unitsConsumed: 0,
    });
    // web3.js without a commitment asks for nothing, so the node's default applies.
    const plain = new Connection(net.url, { disableRetryOnRateLimit: true });
    const err = await plain.sendRawTransaction(transfer(blockhash).serialize()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(SendTransactionError);
    expect((err as Error).message).to.include('Blockhash not found');
    // The same blockhash at confirmed is fine, and at finalized once its block is.
    expect((await send(transfer(blockhash), { preflightCommitment: 'confirmed' })).result).to.be.a('string');
    finalizeAll();
    expect((await send(transfer(blockhash, LAMPORTS_PER_SOL / 100 + 1))).result).to.be.a('string');
    finalizeAll();
  });

  it('simulateTransaction runs at its commitment and carries fee, balances and loadedAddresses like the node', async () => {
    net.advanceSlots(1);
    const { blockhash } = await conn.getLatestBlockhash('confirmed');
    const tx = transfer(blockhash);
    const b64 = tx.serialize().toString('base64');
    const atFinalized = await rpc<{ value: Simulation }>(net.url, 'simulateTransaction', [b64, { encoding: 'base64' }]);
    const v = atFinalized.result!.value;
    expect(Object.keys(v).sort()).to.deep.equal(SIMULATION_FIELDS);
    expect(v.err).to.equal('BlockhashNotFound');
    // Not loaded: no fee, but the balances are collected all the same (unchanged).
    expect(v.fee).to.equal(null);
    expect(v.preBalances).to.deep.equal(v.postBalances);
    expect(v.preBalances![0]).to.equal(await conn.getBalance(payer.publicKey, 'finalized'));
    expect(v.loadedAddresses).to.deep.equal({ writable: [], readonly: [] });

    const ok = (
      await rpc<{ value: Simulation }>(net.url, 'simulateTransaction', [
        b64,
        { encoding: 'base64', commitment: 'confirmed' },
      ])
    ).result!.value;
    expect(ok.err).to.equal(null);
    expect(ok.fee).to.equal(5000);
    expect(ok.postBalances![0]).to.equal(ok.preBalances![0] - 5000 - LAMPORTS_PER_SOL / 100);
    expect(ok.postBalances![1]).to.equal(LAMPORTS_PER_SOL / 100);
    // As solana-test-validator 3.1.4 counts a SOL transfer (tests/fixtures/golden): payer and recipient 64 each, the
    // only-invoked System program its name, 'system_program'.
    expect(ok.loadedAccountsDataSize).to.equal(2 * 64 + 14);

    // A failed execution: the fee is still charged in the post balances.
    const poor = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: payer.publicKey, lamports: 1 }),
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000 * LAMPORTS_PER_SOL,
      }),
    );
    poor.sign(payer);
    const failed = (
      await rpc<{ value: Simulation }>(net.url, 'simulateTransaction', [
        poor.serialize().toString('base64'),
        { encoding: 'base64', commitment: 'confirmed' },
      ])
    ).result!.value;
    expect(failed.err).to.deep.equal({ InstructionError: [1, { Custom: 1 }] });
    expect(failed.fee).to.equal(5000);
    expect(failed.postBalances![0]).to.equal(failed.preBalances![0] - 5000);

    // The preflight failure of the same transaction: the node keeps fee and loaded size, nulls the balances.
    const pf = await send(poor, { preflightCommitment: 'confirmed' });
    expect(pf.error!.code).to.equal(-32002);
    expect(pf.error!.data).to.deep.include({ fee: 5000, preBalances: null, loadedAddresses: null });
    expect(pf.error!.data!.loadedAccountsDataSize).to.equal(failed.loadedAccountsDataSize);
  });

  it('a bad signature is a -32002 preflight failure (SignatureFailure), checked before the blockhash', async () => {
    const bytes = transfer(bs58.encode(new Uint8Array(32).fill(7))).serialize();
    bytes[10] ^= 0xff;
    const res = await rpc<string, Simulation>(net.url, 'sendTransaction', [
      bytes.toString('base64'),
      { encoding: 'base64' },
    ]);
    expect(res.error!.code).to.equal(-32002);
    expect(res.error!.message).to.equal(
      'Transaction simulation failed: Transaction did not pass signature verification',
    );
    expect(res.error!.data!.err).to.equal('SignatureFailure');
  });

  it('AlreadyProcessed only for what landed at or under the preflight commitment', async () => {
    const { blockhash } = await conn.getLatestBlockhash('finalized');
    const tx = transfer(blockhash, LAMPORTS_PER_SOL / 100 + 2);
    const sig = (await send(tx)).result!;
    net.advanceSlots(1);
    expect((await send(tx, { preflightCommitment: 'confirmed' })).error!.data!.err).to.equal('AlreadyProcessed');
    // At finalized the node has not seen it: it answers the signature, and nothing runs twice.
    const before = await conn.getBalance(payer.publicKey, 'processed');
    expect((await send(tx)).result).to.equal(sig);
    expect(await conn.getBalance(payer.publicKey, 'processed')).to.equal(before);
    finalizeAll();
    expect((await send(tx)).error!.data!.err).to.equal('AlreadyProcessed');
  });

  it('getTransaction: costUnits, top-level stackHeight 1, a zero token balance with uiAmount null; confirmations count up', async () => {
    const { blockhash } = await conn.getLatestBlockhash('confirmed');
    const sig = (await send(transfer(blockhash, LAMPORTS_PER_SOL / 100 + 3), { preflightCommitment: 'confirmed' }))
      .result!;
    net.advanceSlots(1);
    const status = async () => (await conn.getSignatureStatuses([sig])).value[0]!;
    // A node counts the votes on the slot: 1 once confirmed, more as blocks follow, null once rooted.
    expect(await status()).to.deep.include({ confirmations: 1, confirmationStatus: 'confirmed' });
    net.advanceSlots(1);
    expect((await status()).confirmations).to.equal(2);

    type Got = {
      meta: { costUnits: number };
      transaction: { message: { instructions: Array<{ stackHeight: unknown }> } };
    };
    const got = (await rpc<Got>(net.url, 'getTransaction', [sig, { commitment: 'confirmed', encoding: 'json' }]))
      .result!;
    // 720 (a signature) + 2 × 300 (write locks) + floor(12 data bytes / 4) + 150 units + 8 (one 32 KiB page).
    expect(got.meta.costUnits).to.equal(1481);
    expect(got.transaction.message.instructions.map((i) => i.stackHeight)).to.deep.equal([1]);
    const parsed = (
      await rpc<Got>(net.url, 'getTransaction', [sig, { commitment: 'confirmed', encoding: 'jsonParsed' }])
    ).result!;
    expect(parsed.transaction.message.instructions.map((i) => i.stackHeight)).to.deep.equal([1]);
    expect(parsed.meta.costUnits).to.equal(1481);
    finalizeAll();
    expect(await status()).to.deep.include({ confirmations: null, confirmationStatus: 'finalized' });

    // A mint and an empty ATA: its post token balance is 0 with uiAmount null (the ledger's round trip);
    // getTokenAccountBalance (the account decoder) says 0.
    const mint = Keypair.generate();
    const owner = Keypair.generate().publicKey;
    const ata = getAssociatedTokenAddressSync(mint.publicKey, owner);
    const rent = await conn.getMinimumBalanceForRentExemption(MINT_SIZE);
    const { blockhash: bh2 } = await conn.getLatestBlockhash('finalized');
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bh2 }).add(
      ...mintAccountInstructions(payer.publicKey, mint.publicKey, 6, rent),
      createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, owner, mint.publicKey),
    );
    tx.sign(payer, mint);
    const tsig = (await send(tx)).result!;
    net.advanceSlots(1);
    type Balances = { meta: { postTokenBalances: Array<{ uiTokenAmount: Record<string, unknown> }> } };
    const tgot = (await rpc<Balances>(net.url, 'getTransaction', [tsig, { commitment: 'confirmed' }])).result!;
    expect(tgot.meta.postTokenBalances.map((b) => b.uiTokenAmount)).to.deep.equal([
      { amount: '0', decimals: 6, uiAmount: null, uiAmountString: '0' },
    ]);
    expect((await conn.getTokenAccountBalance(ata, 'confirmed')).value.uiAmount).to.equal(0);
  });

  it('getVersion and getClusterNodes name Agave 3.1.4 and its feature-set id', async () => {
    expect((await rpc(net.url, 'getVersion')).result).to.deep.equal({
      'feature-set': 2086771155,
      'solana-core': '3.1.4',
    });
    const [node] = (await rpc<Array<{ version: string; featureSet: number }>>(net.url, 'getClusterNodes')).result!;
    expect(node).to.deep.include({ version: '3.1.4', featureSet: 2086771155 });
  });
});
