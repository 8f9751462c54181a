// Backfill in-process against the replay RPC and the real ledger: a slot it cannot process does not stop the
// rest, is reported, and a rerun of the range completes it without double credit.
import { expect } from 'chai';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { ReplayRpc, startReplayRpc } from '../../../testkit/replay-rpc';
import { createLedger } from '../../../indexer/ledger';
import { decodeBlock } from '../../../indexer/decode';
import { createRpcClient } from '../../../indexer/rpc';
import { runBackfill, BackfillProgress } from '../../../indexer/source/backfill';
import { SOURCE_CODES } from '../../../common/errors/codes';
import { buildChain, createChainInvoice, loadChain, totals } from './chain-fixture';

describe('indexer/source backfill', () => {
  let db: TestDb;
  let rpc: ReplayRpc;
  before(async () => {
    db = await createTestDb('backfill');
    rpc = await startReplayRpc();
  });
  after(async () => {
    await rpc.close();
    await db.drop();
  });

  it('reports an unprocessable slot, applies the others, and a rerun completes the range exactly', async () => {
    const cluster = 'bf';
    const chain = buildChain({ from: 10, to: 70, skipEvery: 6 });
    loadChain(rpc, chain, 100);
    await createChainInvoice(db.pool, chain);
    rpc.inject({ kind: 'blockNotAvailable', method: 'getBlock', slot: 33, times: 1 });
    const deps = {
      rpc: createRpcClient({ url: rpc.url, retry: { baseMs: 2, capMs: 10, timeoutMs: 500 } }),
      ledger: createLedger({ db: db.pool }),
      decode: (b: unknown, slot: number) => decodeBlock(b, { slot, cluster }),
    };
    const opts = {
      cluster,
      fromSlot: 10,
      toSlot: 70,
      commitment: 'finalized' as const,
      listSpan: 25,
      chunkSize: 4,
      concurrency: 2,
    };
    const progress: BackfillProgress[] = [];
    const first = await runBackfill({ ...deps, onProgress: (p) => progress.push(p) }, opts);
    expect(first.failures.map((f) => [f.slot, f.code])).to.deep.equal([[33, SOURCE_CODES.BLOCK_NOT_AVAILABLE]]);
    expect(first.receipts).to.equal(chain.receipts - 2);
    expect(progress.at(-1)).to.deep.include({ done: 61, total: 61 });
    expect(progress.map((p) => p.done)).to.deep.equal([...progress.map((p) => p.done)].sort((a, b) => a - b));

    const second = await runBackfill(deps, opts);
    expect(second.failures).to.deep.equal([]);
    expect(second.inserted).to.equal(2);
    expect(second.duplicates).to.equal(chain.receipts - 2);
    const t = await totals(db.pool, cluster);
    expect(t.receipts).to.equal(chain.receipts);
    expect(t.credited).to.equal(chain.amount);
    expect(t.exceptions).to.equal(0);
    expect(t.checkpoints).to.deep.equal({});
  });

  it('refuses an inverted range with a specific code', async () => {
    const e = await runBackfill(
      { rpc: createRpcClient({ url: rpc.url }), ledger: createLedger({ db: db.pool }), decode: () => [] },
      { cluster: 'bf', fromSlot: 9, toSlot: 3, commitment: 'finalized', listSpan: 10, chunkSize: 1, concurrency: 1 },
    ).catch((x) => x);
    expect(e.code).to.equal(SOURCE_CODES.INVALID_OPTION);
  });
});
