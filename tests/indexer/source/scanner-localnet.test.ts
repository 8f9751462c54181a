// The scanner against `oncepay localnet` (the real SVM behind a JSON-RPC server): real SPL token transfers and
// SOL transfers, finality as the node reports it, injected 429s / timeouts and a skipped slot. On a node given by
// ANCHOR_PROVIDER_URL (testkit/node) the same transfers and re-scans run without the injected faults.
import { expect } from 'chai';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createInitializeAccount3Instruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import { onExternalNode, scaledWait, startTestNode, TestNode } from '../../../testkit/node';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { createLedger } from '../../../indexer/ledger';
import { decodeBlock } from '../../../indexer/decode';
import { createRpcClient, RpcErrorKind } from '../../../indexer/rpc';
import { createScanner } from '../../../indexer/source/scanner';
import { airdrop, confirm, send } from '../../../testkit/cluster';
import { totals } from './chain-fixture';

describe('indexer/source scanner over oncepay localnet (LiteSVM)', () => {
  let net: TestNode;
  let db: TestDb;
  const cluster = 'localnet-test';

  before(async () => {
    net = await startTestNode({ slotMs: 20, finalityDepth: 4 });
    db = await createTestDb('scanner_localnet');
  });
  after(async () => {
    await net.stop();
    await db.drop();
  });

  // On an external node the faults are not injected, and the title says so.
  const title = onExternalNode()
    ? 'indexes real transfers exactly once through repeated re-scans (faults injected on localnet only)'
    : 'indexes real transfers exactly once through 429s, timeouts, a skipped slot and repeated re-scans';
  it(title, async () => {
    const connection = net.connection();
    const faults = net.localnet?.faults; // localnet's fault injection; none on an external node
    const payer = Keypair.generate();
    const merchant = Keypair.generate();
    const mint = Keypair.generate();
    const source = Keypair.generate();
    const dest = Keypair.generate();
    await airdrop(connection, payer.publicKey, 10_000_000_000);
    const startSlot = await connection.getSlot('finalized');
    const rent = (n: number) => connection.getMinimumBalanceForRentExemption(n);
    await send(
      connection,
      [
        SystemProgram.createAccount({
          fromPubkey: payer.publicKey,
          newAccountPubkey: mint.publicKey,
          lamports: await rent(MINT_SIZE),
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeMint2Instruction(mint.publicKey, 6, payer.publicKey, null),
        SystemProgram.createAccount({
          fromPubkey: payer.publicKey,
          newAccountPubkey: source.publicKey,
          lamports: await rent(ACCOUNT_SIZE),
          space: ACCOUNT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeAccount3Instruction(source.publicKey, mint.publicKey, payer.publicKey),
        SystemProgram.createAccount({
          fromPubkey: payer.publicKey,
          newAccountPubkey: dest.publicKey,
          lamports: await rent(ACCOUNT_SIZE),
          space: ACCOUNT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeAccount3Instruction(dest.publicKey, mint.publicKey, merchant.publicKey),
        createMintToInstruction(mint.publicKey, source.publicKey, payer.publicKey, 1_000_000_000n),
      ],
      [payer, mint, source, dest],
    );
    const amounts = [1_500_000n, 2_250_000n, 1n, 999_999n, 3_000_000n];
    const expected = amounts.reduce((a, b) => a + b, 0n);
    await createLedger({ db: db.pool }).createInvoice({
      id: 'inv-localnet',
      mint: mint.publicKey.toBase58(),
      expectedAmount: expected,
      depositAddress: merchant.publicKey.toBase58(),
    });

    // A slot ahead produces no block; the node answers -32007 for it and the scanner must pass it.
    const skipped = (await connection.getSlot('processed')) + 3;
    faults?.skipSlot(skipped);
    let lastSlot = 0;
    for (const a of amounts) {
      const { signature: sig } = await send(
        connection,
        [createTransferCheckedInstruction(source.publicKey, mint.publicKey, dest.publicKey, payer.publicKey, a, 6)],
        [payer],
      );
      lastSlot = Math.max(
        lastSlot,
        (await connection.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!.slot,
      );
    }
    // A native SOL transfer too, to another wallet (to the merchant it would be a mint_mismatch exception).
    // (Enough lamports for the fresh account to be rent-exempt, or the runtime refuses it.)
    const solSig = await connection.sendTransaction(
      new Transaction().add(
        SystemProgram.transfer({
          fromPubkey: payer.publicKey,
          toPubkey: Keypair.generate().publicKey,
          lamports: 1_000_000_000,
        }),
      ),
      [payer],
    );
    await confirm(connection, solSig);
    lastSlot = Math.max(
      lastSlot,
      (await connection.getTransaction(solSig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!.slot,
    );

    // Finality comes from the node (finalized commitment), never from a slot count of ours.
    const until = Date.now() + scaledWait(30_000);
    while ((await connection.getSlot('finalized')) < lastSlot + 2) {
      if (Date.now() > until) throw new Error('localnet did not finalize');
      await new Promise((r) => setTimeout(r, 20));
    }

    const errors: Partial<Record<RpcErrorKind, number>> = {};
    const rpc = createRpcClient({
      url: net.url,
      retry: { attempts: 6, baseMs: 5, capMs: 50, timeoutMs: 3000 },
      onError: (k) => (errors[k] = (errors[k] ?? 0) + 1),
    });
    const scanner = createScanner(
      { rpc, ledger: createLedger({ db: db.pool }), decode: (block, slot) => decodeBlock(block, { slot, cluster }) },
      {
        cluster,
        commitment: 'finalized',
        rescanWindow: 32,
        fromSlot: startSlot,
        maxSlotsPerPass: 5000,
        chunkSize: 8,
        concurrency: 3,
        pollMs: 10,
      },
    );
    faults?.failNext({ kind: '429', method: 'getBlock', count: 3 });
    // Hangs longer than the client's deadline, so it is a timeout on our side (not a dropped socket).
    faults?.failNext({ kind: 'timeout', method: 'getBlock', count: 1, delayMs: 4000 });
    const first = await scanner.run({ once: true });
    expect(first?.stoppedAt ?? null).to.equal(null);
    if (faults) {
      expect(errors.http_429).to.equal(3);
      expect(errors.timeout).to.equal(1);
    }

    const mintRows = async () =>
      (
        await db.pool.query(
          `SELECT count(*)::int AS n, coalesce(sum(amount),0)::text AS s FROM receipts WHERE cluster = $1 AND mint = $2`,
          [cluster, mint.publicKey.toBase58()],
        )
      ).rows[0];
    const solRow = async () =>
      (
        await db.pool.query(`SELECT count(*)::int AS n FROM receipts WHERE cluster = $1 AND signature = $2`, [
          cluster,
          solSig,
        ])
      ).rows[0].n;
    const after1 = await totals(db.pool, cluster);
    expect(await mintRows()).to.deep.equal({ n: amounts.length, s: expected.toString() });
    expect(await solRow()).to.equal(1);
    expect(after1.credited).to.equal(expected);
    expect(after1.exceptions).to.equal(0);
    expect(after1.fulfilments).to.equal(1);
    expect(after1.checkpoints.scanner).to.be.at.least(lastSlot);

    // The chain moves on; more passes re-read the window: same totals, the re-reads counted as duplicates.
    for (let k = 0; k < 3; k++) {
      const target = (await connection.getSlot('finalized')) + 3;
      while ((await connection.getSlot('finalized')) < target) await new Promise((r) => setTimeout(r, 20));
      await scanner.runPass();
    }
    const after2 = await totals(db.pool, cluster);
    expect(after2.receipts).to.equal(after1.receipts);
    expect(after2.credited).to.equal(expected);
    expect(after2.exceptions).to.equal(0);
    expect(after2.checkpoints.scanner).to.be.greaterThan(after1.checkpoints.scanner);
    if (faults) expect(after2.checkpoints.scanner).to.be.greaterThan(skipped);
    expect(after2.duplicates.scanner ?? 0).to.be.greaterThan(0);
  });
});
