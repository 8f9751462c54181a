// A webhook hint whose check fails mid-way (the database went away while its receipts were being applied) goes back
// to the queue at once, with the rest of its round, instead of sitting out its lease (a minute); and a delivery's own
// check of a hint a background round leased first waits for that round's outcome instead of answering "pending".
// Real PostgreSQL, the replay RPC (a node's wire format) for getTransaction.
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

  it('the ledger fails once: the round throws once its calls in flight end, and the next round credits the rest at once', async () => {
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
    // The credits of the calls that were in flight when the apply failed stand; the failed hint went back.
    const open = await db.pool.query(
      `SELECT count(*)::int AS n FROM webhook_hints WHERE cluster = $1 AND state <> 'credited'`,
      [CLUSTER],
    );
    expect(open.rows[0].n).to.be.within(1, 3);

    const next = await verifier.checkDue();
    expect(next.credited).to.equal(open.rows[0].n);
    for (const t of txs) expect((await ledger.getInvoice(t.id))!.creditedAmount).to.equal(t.amount);
    const states = await db.pool.query(
      `SELECT state, count(*)::int AS n FROM webhook_hints WHERE cluster = $1 GROUP BY state`,
      [CLUSTER],
    );
    expect(states.rows).to.deep.equal([{ state: 'credited', n: 3 }]);
  });

  it("a delivery's own check of a hint a background round leased first: it waits for that round and reports the credit", async () => {
    const ledger = createLedger({ db: db.pool });
    const mint = randomAddress();
    const owner = randomAddress();
    const tx = transferCheckedTx({ amount: 5n, mint, destinationOwner: owner });
    await ledger.createInvoice({ id: 'raced', mint, expectedAmount: 5n, depositAddress: owner });
    rpc.setBlock(10, blockAt(10, [tx]));
    rpc.setTip({ finalized: 12, confirmed: 12 });
    const signature = (tx.transaction as { signatures: string[] }).signatures[0];
    const [held] = await createWebhookStore(db.pool).holdHints(
      CLUSTER,
      'test',
      'evt-2',
      [{ signature, claimed: null }],
      600_000,
    );

    // The background round leases the hint (it is due at once) and stops in the ledger until the gate opens.
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    let applying!: () => void;
    const inLedger = new Promise<void>((r) => (applying = r));
    const verifier = createChainVerifier({
      db: db.pool,
      rpc: createRpcClient({ url: rpc.url, retry: { attempts: 1, timeoutMs: 5_000 } }),
      ledger: {
        applyBatch: async (input: ApplyBatchInput) => {
          applying();
          await gate;
          return ledger.applyBatch(input);
        },
      },
      cluster: CLUSTER,
    });
    const round = verifier.checkDue();
    let own: Promise<unknown>;
    try {
      await inLedger;
      // The delivery's check (as webhook.ts runs it right after storing) finds the hint leased by the round: it does
      // not answer while the round holds it.
      let answered = false;
      own = verifier.check([held.id], AbortSignal.timeout(60_000)).finally(() => (answered = true));
      await new Promise((r) => setTimeout(r, 200));
      expect(answered, 'answered while the round still checks its hint').to.equal(false);
    } finally {
      openGate(); // a failure above leaves no round hanging
    }
    expect(await round).to.deep.include({ checked: 1, credited: 1, inserted: 1 });
    // Credited, as the round settled it; the receipt is the round's (inserted there, not counted twice).
    expect(await own).to.deep.include({ credited: 1, inserted: 0, receipts: 0 });
    expect((await ledger.getInvoice('raced'))!.creditedAmount).to.equal(5n);

    // Once settled, a check of it (nothing to lease, nothing in flight) reads its state: credited, not pending.
    expect(await verifier.check([held.id])).to.deep.include({ credited: 1 });
  });
});
