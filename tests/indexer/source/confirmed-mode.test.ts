// `--commitment confirmed`: confirmed blocks above the finalized checkpoint become provisional rows (never
// credited); once finalized they settle by identity — 'final' if the ledger holds them, 'reversed' if their block
// vanished (a fork replaced it, or the slot was skipped on the surviving chain).
import { expect } from 'chai';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { blockAt, ReplayRpc, startReplayRpc, transferCheckedTx } from '../../../testkit/replay-rpc';
import { createLedger } from '../../../indexer/ledger';
import { decodeBlock } from '../../../indexer/decode';
import { createRpcClient } from '../../../indexer/rpc';
import { createScanner } from '../../../indexer/source/scanner';
import { createProvisionalTracker } from '../../../indexer/source/provisional';
import { buildChain, createChainInvoice, totals } from './chain-fixture';

describe('indexer/source scanner, confirmed mode (provisional rows)', () => {
  let db: TestDb;
  let rpc: ReplayRpc;
  before(async () => {
    db = await createTestDb('confirmed');
    rpc = await startReplayRpc();
  });
  after(async () => {
    await rpc.close();
    await db.drop();
  });

  async function states(cluster: string): Promise<Record<string, number>> {
    const { rows } = await db.pool.query(
      `SELECT state::text, count(*)::int AS n FROM provisional_receipts WHERE cluster = $1 GROUP BY state`,
      [cluster],
    );
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  it('keeps confirmed transfers provisional, credits only finalized ones, and reverses what a fork dropped', async () => {
    const cluster = 'conf';
    const chain = buildChain({ from: 1, to: 30 });
    for (const [s, b] of chain.blocks) rpc.setBlock(s, b);
    rpc.setTip({ finalized: 20, confirmed: 30 });
    const amountOf = (slot: number) => (1000n + BigInt(slot) * 10n) * 2n + 1n;
    const finalAmount = chain.amount - amountOf(25) - amountOf(27);
    await createChainInvoice(db.pool, chain, finalAmount);

    const client = createRpcClient({ url: rpc.url, retry: { baseMs: 2, capMs: 10, timeoutMs: 500 } });
    const decode = (b: unknown, slot: number) => decodeBlock(b, { slot, cluster });
    const scanner = createScanner(
      {
        rpc: client,
        ledger: createLedger({ db: db.pool }),
        decode,
        provisional: createProvisionalTracker({ db: db.pool, rpc: client, decode, concurrency: 2, maxSlots: 1000 }),
      },
      {
        cluster,
        commitment: 'confirmed',
        rescanWindow: 8,
        fromSlot: 1,
        maxSlotsPerPass: 1000,
        chunkSize: 10,
        concurrency: 2,
        pollMs: 10,
      },
    );

    const p1 = await scanner.runPass();
    expect(p1.checkpointAfter).to.equal(20);
    expect(p1.provisional).to.deep.include({ confirmedTarget: 30, seen: 20, final: 0, reversed: 0 });
    expect(await states(cluster)).to.deep.equal({ provisional: 20 });
    let t = await totals(db.pool, cluster);
    expect(t.receipts).to.equal(40);
    expect(t.credited).to.equal(
      chain.amount - [21, 22, 23, 24, 25, 26, 27, 28, 29, 30].reduce((a, s) => a + amountOf(s), 0n),
    );

    // A fork: slot 25 finalizes with another block (a payment elsewhere), slot 27 ends up skipped.
    rpc.setBlock(25, blockAt(25, [transferCheckedTx({ amount: 5n })]));
    rpc.setSkipped(27);
    rpc.setTip({ finalized: 30, confirmed: 31 });
    const p2 = await scanner.runPass();
    expect(p2.checkpointAfter).to.equal(30);
    expect(p2.provisional).to.deep.include({ final: 16, reversed: 4 });
    expect(await states(cluster)).to.deep.equal({ final: 16, reversed: 4 });
    const { rows } = await db.pool.query(
      `SELECT DISTINCT slot::int FROM provisional_receipts WHERE cluster = $1 AND state = 'reversed' ORDER BY 1`,
      [cluster],
    );
    expect(rows.map((r) => r.slot)).to.deep.equal([25, 27]);

    t = await totals(db.pool, cluster);
    expect(t.receipts).to.equal(chain.receipts - 4 + 1);
    expect(t.credited).to.equal(finalAmount);
    expect(t.exceptions).to.equal(0);
    expect(t.fulfilments).to.equal(1);

    // Settled rows stay settled on later passes.
    await scanner.runPass();
    expect(await states(cluster)).to.deep.equal({ final: 16, reversed: 4 });
  });
});
