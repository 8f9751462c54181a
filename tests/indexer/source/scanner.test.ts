// The slot scanner against the replay RPC server (real HTTP on loopback, real wire-format blocks) and the real
// ledger on PostgreSQL.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { blockAt, ReplayRpc, startReplayRpc, transferCheckedTx } from '../../../testkit/replay-rpc';
import { createLedger } from '../../../indexer/ledger';
import { decodeBlock, decodeTransaction } from '../../../indexer/decode';
import { createRpcClient, RpcErrorKind } from '../../../indexer/rpc';
import { createScanner, ScannerOptions } from '../../../indexer/source/scanner';
import { SOURCE_CODES } from '../../../common/errors/codes';
import { createIndexerMetrics } from '../../../indexer/metrics';
import { createSourceMetrics } from '../../../indexer/source/metrics';
import { buildChain, Chain, createChainInvoice, expectExactTotals, loadChain, totals } from './chain-fixture';

describe('indexer/source scanner (replay RPC + PostgreSQL)', () => {
  let db: TestDb;
  let rpcServer: ReplayRpc;
  let cluster: string;
  let n = 0;

  before(async () => {
    db = await createTestDb('scanner');
  });
  after(async () => {
    await db.drop();
  });
  beforeEach(async () => {
    rpcServer = await startReplayRpc();
    cluster = `replay-${++n}`;
    await db.pool.query(
      'TRUNCATE invoices, receipts, exceptions, fulfilments, outbox, checkpoints, receipt_delivery_counts CASCADE',
    );
  });
  afterEach(async () => {
    await rpcServer.close();
  });

  function scannerFor(opts: Partial<ScannerOptions> = {}) {
    const errors: Partial<Record<RpcErrorKind, number>> = {};
    const lags: number[] = [];
    const rpc = createRpcClient({
      url: rpcServer.url,
      retry: { attempts: 6, baseMs: 5, capMs: 40, timeoutMs: 400 },
      onError: (k) => (errors[k] = (errors[k] ?? 0) + 1),
    });
    const scanner = createScanner(
      {
        rpc,
        ledger: createLedger({ db: db.pool }),
        decode: (block, slot) => decodeBlock(block, { slot, cluster }),
        metrics: {
          setCheckpointLag: (_c, _s, v) => lags.push(v),
          countRpcError() {},
          countSlots() {},
          countWebhook() {},
          countBalanceMismatch() {},
        },
      },
      {
        cluster,
        commitment: 'finalized',
        rescanWindow: 32,
        fromSlot: 1,
        maxSlotsPerPass: 1000,
        chunkSize: 7,
        concurrency: 3,
        pollMs: 10,
        ...opts,
      },
    );
    return { scanner, errors, lags };
  }

  async function expectExact(chain: Chain, tip: number) {
    const t = await expectExactTotals(db.pool, cluster, chain);
    expect(t.checkpoints.scanner).to.equal(tip);
    return t;
  }

  it('re-reading the trailing window on every pass gives the totals of one delivery, and counts the duplicates', async () => {
    const first = buildChain({ from: 1, to: 60, skipEvery: 7 });
    loadChain(rpcServer, first, 60);
    const all: Chain = { ...first, receipts: first.receipts, amount: first.amount };
    const more = buildChain({ from: 61, to: 70, skipEvery: 7, owner: first.owner, mint: first.mint });
    all.receipts += more.receipts;
    all.amount += more.amount;
    await createChainInvoice(db.pool, all);
    const { scanner, lags } = scannerFor();

    const p1 = await scanner.run({ once: true });
    expect(p1?.caughtUp).to.equal(true);
    expect((await totals(db.pool, cluster)).receipts).to.equal(first.receipts);
    expect(lags.at(-1)).to.equal(0);

    loadChain(rpcServer, more, 70);
    const p2 = await scanner.runPass();
    // The pass re-read slots 29..60 (the window) and read 61..70 anew.
    expect(p2.range).to.deep.equal({ start: 29, end: 70 });
    const windowReceipts = [...first.blocks.keys()].filter((s) => s >= 29).length * 2;
    expect(p2.duplicates).to.equal(windowReceipts);
    expect(p2.inserted).to.equal(more.receipts);

    // More passes over the same tip change nothing.
    for (let k = 0; k < 3; k++) expect((await scanner.runPass()).range).to.equal(null);
    rpcServer.setTip({ finalized: 71 });
    const p3 = await scanner.runPass();
    expect(p3.inserted).to.equal(0);
    const t = await expectExact(all, 71);
    expect(t.duplicates.scanner).to.equal(p2.duplicates + p3.duplicates);
    expect(t.duplicates.scanner).to.be.greaterThan(0);
  });

  it('replays recorded LiteSVM transactions packed into blocks: the ledger holds exactly what the decoder reads from each', async () => {
    const dir = path.resolve(__dirname, '../../fixtures/transactions/litesvm/json');
    const txs = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
    expect(txs.length).to.be.greaterThan(5);
    const expected = new Set<string>();
    let slot = 100;
    for (let i = 0; i < txs.length; i += 3) {
      slot += 2;
      // A block entry is the getTransaction result without slot / blockTime.
      const entries = txs.slice(i, i + 3).map(({ slot: _s, blockTime: _t, ...rest }) => rest);
      for (const t of txs.slice(i, i + 3))
        for (const r of decodeTransaction(t)) expected.add(`${r.signature}/${r.ixIndex}/${r.innerIndex}/${r.amount}`);
      rpcServer.setBlock(slot, blockAt(slot, entries));
    }
    expect(expected.size).to.be.greaterThan(5);
    rpcServer.setTip({ finalized: slot + 1 });
    const { scanner } = scannerFor({ fromSlot: 100 });
    await scanner.run({ once: true });
    await scanner.run({ once: true });
    const { rows } = await db.pool.query(
      `SELECT signature, ix_index, inner_index, amount::text AS amount FROM receipts WHERE cluster = $1`,
      [cluster],
    );
    expect(new Set(rows.map((r) => `${r.signature}/${r.ix_index}/${r.inner_index}/${r.amount}`))).to.deep.equal(
      expected,
    );
    expect(rows.length).to.equal(expected.size);
    expect((await totals(db.pool, cluster)).checkpoints.scanner).to.equal(slot + 1);
  });

  it('retries 429s, 5xx and timeouts, counts them by kind, and loses nothing', async () => {
    const chain = buildChain({ from: 1, to: 40, skipEvery: 9 });
    loadChain(rpcServer, chain, 40);
    await createChainInvoice(db.pool, chain);
    rpcServer.inject({ kind: 'http429', method: 'getBlock', times: 4 });
    rpcServer.inject({ kind: 'timeout', method: 'getBlock', slot: 5, times: 2 });
    rpcServer.inject({ kind: 'http500', method: 'getSlot', times: 1 });
    rpcServer.inject({ kind: 'http429', method: 'getBlocks', times: 2 });
    const { scanner, errors } = scannerFor();
    const last = await scanner.run({ once: true });
    expect(last?.stoppedAt).to.equal(null);
    expect(rpcServer.served).to.deep.equal({ http429: 6, timeout: 2, http500: 1 });
    expect(errors).to.deep.equal({ http_429: 6, timeout: 2, http_5xx: 1 });
    await expectExact(chain, 40);
  });

  it('passes a skipped slot (-32007 from getBlock, or not listed by getBlocks)', async () => {
    const chain = buildChain({ from: 1, to: 30 });
    loadChain(rpcServer, chain, 30);
    // Slot 12 is listed but the node answers "slot skipped": it has no block, so no receipts either.
    const lost = chain.blocks.get(12) as { transactions: unknown[] };
    rpcServer.inject({ kind: 'slotSkipped', method: 'getBlock', slot: 12, times: Infinity });
    rpcServer.setSkipped(20);
    const expected: Chain = {
      ...chain,
      receipts: chain.receipts - 4,
      amount: chain.amount - (1000n + 120n) - (1001n + 120n) - (1000n + 200n) - (1001n + 200n),
    };
    expect(lost.transactions.length).to.equal(2);
    await createChainInvoice(db.pool, expected);
    const { scanner, errors } = scannerFor();
    const p = await scanner.run({ once: true });
    expect(p?.stoppedAt).to.equal(null);
    expect(p?.skipped).to.equal(1);
    expect(errors.slot_skipped).to.equal(1);
    await expectExact(expected, 30);
  });

  it('stops the checkpoint below a block that is not available yet, then resumes past it', async () => {
    const chain = buildChain({ from: 1, to: 50 });
    loadChain(rpcServer, chain, 50);
    await createChainInvoice(db.pool, chain);
    rpcServer.inject({ kind: 'blockNotAvailable', method: 'getBlock', slot: 23, times: 2 });
    const { scanner } = scannerFor();
    const p1 = await scanner.runPass();
    expect(p1.stoppedAt).to.deep.include({ slot: 23, code: SOURCE_CODES.BLOCK_NOT_AVAILABLE });
    expect(p1.checkpointAfter).to.equal(22);
    let t = await totals(db.pool, cluster);
    expect(t.checkpoints.scanner).to.equal(22);
    expect(t.receipts).to.equal(22 * 2);
    // Still not available: still stopped there, nothing past it.
    const p2 = await scanner.runPass();
    expect(p2.checkpointAfter).to.equal(22);
    t = await totals(db.pool, cluster);
    expect(t.receipts).to.equal(22 * 2);
    // Available now: the next pass goes through.
    const p3 = await scanner.runPass();
    expect(p3.stoppedAt).to.equal(null);
    await expectExact(chain, 50);
  });

  it('publishes checkpoint lag, RPC errors by kind and slot outcomes on the Prometheus registry', async () => {
    const chain = buildChain({ from: 1, to: 20, skipEvery: 5 });
    loadChain(rpcServer, chain, 20);
    rpcServer.inject({ kind: 'http429', method: 'getBlock', times: 2 });
    rpcServer.inject({ kind: 'blockNotAvailable', method: 'getBlock', slot: 14, times: 1 });
    const m = createIndexerMetrics();
    const metrics = createSourceMetrics(m);
    const rpc = createRpcClient({
      url: rpcServer.url,
      retry: { baseMs: 2, capMs: 10, timeoutMs: 400 },
      onError: (k) => metrics.countRpcError(k),
    });
    const scanner = createScanner(
      {
        rpc,
        ledger: createLedger({ db: db.pool, metrics: m }),
        decode: (b, slot) => decodeBlock(b, { slot, cluster }),
        metrics,
      },
      {
        cluster,
        commitment: 'finalized',
        rescanWindow: 32,
        fromSlot: 1,
        maxSlotsPerPass: 1000,
        chunkSize: 50,
        concurrency: 1,
        pollMs: 10,
      },
    );
    await scanner.runPass();
    let text = await m.registry.metrics();
    expect(text).to.include(`oncepay_checkpoint_lag_slots{cluster="${cluster}",source="scanner"} 7`);
    expect(text).to.include('oncepay_rpc_errors_total{kind="http_429"} 2');
    expect(text).to.include('oncepay_rpc_errors_total{kind="block_not_available"} 1');
    expect(text).to.include(`oncepay_scanner_slots_total{cluster="${cluster}",source="scanner",outcome="failed"} 1`);
    await scanner.runPass();
    text = await m.registry.metrics();
    expect(text).to.include(`oncepay_checkpoint_lag_slots{cluster="${cluster}",source="scanner"} 0`);
  });

  it('does not pass a slot whose block fails to decode, until it decodes', async () => {
    const chain = buildChain({ from: 1, to: 30 });
    loadChain(rpcServer, chain, 30);
    await createChainInvoice(db.pool, chain);
    const good = chain.blocks.get(17);
    const bad = blockAt(17, [transferCheckedTx({ amount: 5n })]) as {
      transactions: Array<{ transaction: { signatures: string[] } }>;
    };
    bad.transactions[0].transaction.signatures = ['not-a-signature'];
    rpcServer.setBlock(17, bad);
    const { scanner } = scannerFor({ chunkSize: 50 });
    for (let k = 0; k < 2; k++) {
      const p = await scanner.runPass();
      expect(p.stoppedAt).to.deep.include({ slot: 17, code: SOURCE_CODES.BLOCK_UNDECODABLE });
      expect(p.checkpointAfter).to.equal(16);
    }
    const t = await totals(db.pool, cluster);
    expect(t.receipts).to.equal(16 * 2);
    rpcServer.setBlock(17, good);
    await scanner.run({ once: true });
    await expectExact(chain, 30);
  });
});
