// A webhook hint whose check fails mid-way (the database went away while its receipts were being applied) goes back
// to the queue at once, with the rest of its round, instead of sitting out its lease (a minute). Real PostgreSQL, the
// replay RPC (a node's wire format) for getTransaction.
import { expect } from 'chai';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { blockAt, randomAddress, ReplayRpc, startReplayRpc, transferCheckedTx } from '../../../testkit/replay-rpc';
import { createLedger } from '../../../indexer/ledger';
import type { ApplyBatchInput } from '../../../indexer/ledger';
import { createRpcClient } from '../../../indexer/rpc/client';
import { createChainVerifier } from '../../../indexer/source/webhook-verifier';
import { createWebhookStore } from '../../../indexer/source/webhook-store';

const CLUSTER = 'wh-lease';

describe('indexer/source webhook verifier: a failed check gives its leases back', () => {
  let db: TestDb;
  let rpc: ReplayRpc;
  beforeEach(async () => {
    db = await createTestDb('webhook_lease');
    rpc = await startReplayRpc();
  });
  afterEach(async () => {
    await rpc.close();
    await db.drop();
  });

  it('the ledger fails once: the round throws, and the next round credits every hint of it at once', async () => {
    const ledger = createLedger({ db: db.pool });
    const mint = randomAddress();
    const txs = [7n, 11n, 13n].map((amount, i) => {
      const owner = randomAddress();
      return { owner, amount, id: `lease-${i}`, tx: transferCheckedTx({ amount, mint, destinationOwner: owner }) };
    });
    for (const t of txs)
      await ledger.createInvoice({ id: t.id, mint, expectedAmount: t.amount, depositAddress: t.owner });
    rpc.setBlock(
      10,
      blockAt(
        10,
        txs.map((t) => t.tx),
      ),
    );
    rpc.setTip({ finalized: 12, confirmed: 12 });
    const signatures = txs.map((t) => (t.tx.transaction as { signatures: string[] }).signatures[0]);
    const store = createWebhookStore(db.pool);
    await store.holdHints(
      CLUSTER,
      'test',
      'evt-1',
      signatures.map((signature) => ({ signature, claimed: null })),
      600_000,
    );

    // The first apply fails as a terminated session does (after the chain check, before anything is credited).
    let failures = 0;
    const flaky = {
      applyBatch: async (input: ApplyBatchInput) => {
        if (failures === 0) {
          failures++;
          throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
        }
        return ledger.applyBatch(input);
      },
    };
    const verifier = createChainVerifier({
      db: db.pool,
      rpc: createRpcClient({ url: rpc.url, retry: { attempts: 1, timeoutMs: 5_000 } }),
      ledger: flaky,
      cluster: CLUSTER,
      recheck: { baseMs: 20, capMs: 100 },
      // The default lease (a minute): the next round below runs long before it would end.
    });
    const failed = await verifier.checkDue().catch((e: Error) => e);
    expect((failed as Error).message).to.contain('terminating connection');
    const leased = await db.pool.query(
      `SELECT count(*)::int AS n FROM webhook_hints WHERE cluster = $1 AND lease_until IS NOT NULL`,
      [CLUSTER],
    );
    expect(leased.rows[0].n).to.equal(0);

    const next = await verifier.checkDue();
    expect(next.credited).to.equal(3);
    for (const t of txs) expect((await ledger.getInvoice(t.id))!.creditedAmount).to.equal(t.amount);
    const states = await db.pool.query(
      `SELECT state, count(*)::int AS n FROM webhook_hints WHERE cluster = $1 GROUP BY state`,
      [CLUSTER],
    );
    expect(states.rows).to.deep.equal([{ state: 'credited', n: 3 }]);
  });
});
