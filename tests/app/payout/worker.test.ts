// The payout worker pool in-process against the localnet: claims (one statement, SKIP LOCKED + the advisory
// lock), no starvation when more payouts run than the pool has connections, durable backoff when the chain is
// unreachable, the drain, and the uncertain-attempt gauges.
import { expect } from 'chai';
import { Pool } from 'pg';
import { createPool } from '../../../db/pool';
import { createConnectionChain } from '../../../app/payout/chain';
import { runPayout } from '../../../app/payout/run-payout';
import { lockPayout } from '../../../app/payout/lock';
import { claimDuePayout, getPayout, listAttempts } from '../../../app/payout/store';
import { requireLocalnet } from '../../../testkit/node';
import { PayoutWorkerOptions, startPayoutWorker } from '../../../app/payout/worker';
import { PayoutResult } from '../../../app/payout/run-payout';
import {
  expectExactlyOneTransfer,
  expectJournalConsistent,
  PayoutLocalnet,
  startPayoutLocalnet,
  metricValue,
  until,
} from './localnet-setup';

describe('app/payout worker pool (in-process, localnet)', () => {
  let L: PayoutLocalnet;
  const pools: Pool[] = [];
  const smallPool = (max: number) => {
    const p = createPool({ url: L.db.url, schema: L.db.schema, max });
    pools.push(p);
    return p;
  };

  before(async () => {
    L = await startPayoutLocalnet('app_worker');
  });
  after(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await L?.stop();
  });
  afterEach(async () => {
    L?.net.localnet?.faults.clear();
    // Nothing left for the next test's worker.
    await L.db.pool.query(
      `UPDATE payouts SET state = 'failed', last_error = 'test cleanup' WHERE state IN ('pending', 'executing')`,
    );
  });

  const chain = () => createConnectionChain({ connection: L.connection });
  const workerOptions = (o: Partial<PayoutWorkerOptions> & { db: Pool; concurrency: number }): PayoutWorkerOptions => ({
    chain: chain(),
    authority: L.m.authority,
    pollIntervalMs: 20,
    rebroadcastIntervalMs: 100,
    idleMs: 20,
    ...o,
  });

  async function newPayouts(n: number, amount = '1000') {
    const out: Array<Awaited<ReturnType<PayoutLocalnet['newPayout']>>> = [];
    for (let i = 0; i < n; i++) out.push(await L.newPayout(amount));
    return out;
  }

  /** Run a worker until `ids` are all finished; returns what it reported. */
  async function runWorkerUntilDone(
    o: Partial<PayoutWorkerOptions> & { db: Pool; concurrency: number },
    ids: string[],
  ): Promise<PayoutResult[]> {
    const finished: PayoutResult[] = [];
    const w = startPayoutWorker(workerOptions({ ...o, onFinished: (r) => finished.push(r) }));
    try {
      await until(
        async () => ids.every((id) => finished.some((r) => r.id === id)),
        `${ids.length} payouts finished by the worker`,
        90_000,
      );
    } finally {
      await w.stop({ graceMs: 5_000 });
    }
    return finished;
  }

  it('runPayout: more payouts at once than the pool has connections → all paid once (each runs on the connection holding its lock)', async () => {
    // Before, each payout held one pooled connection for its lock and drew its queries from the same pool: with
    // as many payouts in flight as connections, none could run a query again (this test hung).
    const db = smallPool(2);
    const payouts = await newPayouts(5);
    const results = await Promise.all(
      payouts.map(({ row }) =>
        runPayout(row, {
          db,
          chain: chain(),
          authority: L.m.authority,
          pollIntervalMs: 20,
          signal: AbortSignal.timeout(90_000),
        }),
      ),
    );
    expect(results.map((r) => r!.state)).to.deep.equal(payouts.map(() => 'succeeded'));
    for (const { row, recipient } of payouts) {
      await expectExactlyOneTransfer(L.connection, row, recipient);
      await expectJournalConsistent(L.db, L.connection, row);
    }
  });

  it('a worker with --concurrency above its pool size pays every due payout exactly once', async () => {
    const payouts = await newPayouts(8);
    const claimed = await metricValue('oncepay_payout_worker_claims_total', { result: 'claimed' });
    const finished = await runWorkerUntilDone(
      { db: smallPool(2), concurrency: 6 },
      payouts.map((p) => p.row.id),
    );
    expect(finished.map((r) => r.state)).to.deep.equal(payouts.map(() => 'succeeded'));
    for (const { row, recipient } of payouts) {
      await expectExactlyOneTransfer(L.connection, row, recipient);
      await expectJournalConsistent(L.db, L.connection, row);
    }
    expect(await metricValue('oncepay_payout_worker_claims_total', { result: 'claimed' })).to.equal(
      claimed + payouts.length,
    );
  });

  it('claims: one statement takes the row and its lock; a held row, a finished row and a row not yet due are not claimed', async () => {
    const [held, later, free] = await newPayouts(3);
    await L.db.pool.query(`UPDATE payouts SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`, [
      later.row.id,
    ]);
    const holder = (await lockPayout(L.db.pool, held.row.id, 'skip'))!;
    const a = await L.db.pool.connect();
    const b = await L.db.pool.connect();
    try {
      const first = await claimDuePayout(a, 'test-a', [L.merchant.id]);
      expect(first).to.not.equal(null);
      expect(first!.row.id).to.equal(free.row.id);
      expect(first!.locked).to.equal(true);
      expect(first!.row.claimedBy).to.equal('test-a');
      // a holds free's lock now, the test holds held's, later is not due: nothing for b.
      expect(await claimDuePayout(b, 'test-b', [L.merchant.id])).to.equal(null);
      await holder.release();
      const second = await claimDuePayout(b, 'test-b', [L.merchant.id]);
      expect(second!.row.id).to.equal(held.row.id);
      // A second session cannot take a claimed row's lock.
      expect(await lockPayout(L.db.pool, free.row.id, 'skip')).to.equal(null);
    } finally {
      await a.query('SELECT pg_advisory_unlock_all()');
      await b.query('SELECT pg_advisory_unlock_all()');
      a.release();
      b.release();
      await holder.release();
    }
  });

  it('a claim unlocks the finished payout its connection still holds, whether or not it claims another', async () => {
    const [first, second] = await newPayouts(2);
    const finish = (id: string) =>
      L.db.pool.query(`UPDATE payouts SET state = 'failed', last_error = 'test' WHERE id = $1`, [id]);
    const c = await L.db.pool.connect();
    try {
      const a = await claimDuePayout(c, 'test-keep', [L.merchant.id]);
      expect(a!.row.id).to.equal(first.row.id);
      await finish(first.row.id);
      // Finished, and still held by c (another session cannot take it) until c's next claim lets it go.
      expect(await lockPayout(L.db.pool, first.row.id, 'skip')).to.equal(null);
      const b = await claimDuePayout(c, 'test-keep', [L.merchant.id], first.row.id);
      expect(b!.row.id).to.equal(second.row.id);
      const firstLock = await lockPayout(L.db.pool, first.row.id, 'skip');
      expect(firstLock).to.not.equal(null);
      await firstLock!.release();
      await finish(second.row.id);
      // Nothing is due now: the claim finds nothing and still lets second go.
      expect(await claimDuePayout(c, 'test-keep', [L.merchant.id], second.row.id)).to.equal(null);
      const secondLock = await lockPayout(L.db.pool, second.row.id, 'skip');
      expect(secondLock).to.not.equal(null);
      await secondLock!.release();
    } finally {
      await c.query('SELECT pg_advisory_unlock_all()');
      c.release();
    }
  });

  it('a new payout wakes an idle worker at once (LISTEN oncepay_payout_due), long before its idle pause ends', async () => {
    const finished: PayoutResult[] = [];
    const empty = await metricValue('oncepay_payout_worker_claims_total', { result: 'empty' });
    const w = startPayoutWorker(
      workerOptions({ db: smallPool(3), concurrency: 2, idleMs: 600_000, onFinished: (r) => finished.push(r) }),
    );
    try {
      // Both slots have looked once, found nothing and sleep for ten minutes; the listener is connected by then.
      await until(
        async () => (await metricValue('oncepay_payout_worker_claims_total', { result: 'empty' })) >= empty + 2,
        'both slots idle',
      );
      await new Promise((r) => setTimeout(r, 500));
      const [{ row }] = await newPayouts(1);
      await until(async () => finished.some((r) => r.id === row.id), 'the new payout finished', 30_000);
      expect(finished.find((r) => r.id === row.id)!.state).to.equal('succeeded');
    } finally {
      await w.stop({ graceMs: 5_000 });
    }
  });

  it('an idle pool polls with one slot, not all: the others wait to be woken, and a payout due by time is still claimed', async () => {
    const finished: PayoutResult[] = [];
    const emptyClaims = () => metricValue('oncepay_payout_worker_claims_total', { result: 'empty' });
    // Due only in 3 s, and its insert's wake-up goes before any worker listens: only polling finds it.
    const [{ row }] = await newPayouts(1);
    await L.db.pool.query(`UPDATE payouts SET next_attempt_at = now() + interval '3 seconds' WHERE id = $1`, [row.id]);
    const before = await emptyClaims();
    const w = startPayoutWorker(
      workerOptions({ db: smallPool(9), concurrency: 8, idleMs: 50, onFinished: (r) => finished.push(r) }),
    );
    try {
      // Each slot looks once at the start; then, for a second of nothing due, one slot polls every 50 ms. Every slot
      // polling would make about 8 × 20 empty claims in that second; one slot at most 20 (fewer on a slow machine).
      await until(async () => (await emptyClaims()) >= before + 8, 'every slot looked once');
      const t0 = performance.now();
      const afterFirstLook = await emptyClaims();
      await new Promise((r) => setTimeout(r, 1_000));
      const polls = (await emptyClaims()) - afterFirstLook;
      const pauses = (performance.now() - t0) / 50;
      expect(polls, `${polls} empty claims in ${pauses.toFixed(0)} idle pauses`).to.be.at.most(pauses + 8);
      expect(polls).to.be.at.least(1);
      await until(async () => finished.some((r) => r.id === row.id), 'the payout due by time finished', 30_000);
      expect(finished.find((r) => r.id === row.id)!.state).to.equal('succeeded');
    } finally {
      await w.stop({ graceMs: 5_000 });
    }
  });

  it('an unexpected error (not a database outage) is counted as such, not as an outage, and the pool goes on paying', async () => {
    const unexpected = await metricValue('oncepay_payout_worker_handbacks_total', { reason: 'unexpected' });
    const outage = await metricValue('oncepay_payout_worker_handbacks_total', { reason: 'database' });
    const finished: PayoutResult[] = [];
    let thrown = false;
    const w = startPayoutWorker(
      workerOptions({
        db: smallPool(3),
        concurrency: 1,
        databaseBackoff: { baseMs: 20, capMs: 50 },
        onFinished: (r) => {
          finished.push(r);
          if (!thrown) {
            thrown = true;
            throw new TypeError('a bug in a callback');
          }
        },
      }),
    );
    try {
      const [first, second] = await newPayouts(2);
      await until(async () => finished.length >= 2, 'both payouts to finish', 60_000);
      expect(finished.map((r) => r.state)).to.deep.equal(['succeeded', 'succeeded']);
      expect(new Set(finished.map((r) => r.id))).to.deep.equal(new Set([first.row.id, second.row.id]));
    } finally {
      await w.stop({ graceMs: 5_000 });
    }
    expect(await metricValue('oncepay_payout_worker_handbacks_total', { reason: 'unexpected' })).to.equal(
      unexpected + 1,
    );
    expect(await metricValue('oncepay_payout_worker_handbacks_total', { reason: 'database' })).to.equal(outage);
  });

  it('chain unreachable: the payout is handed back with a backoff stored in the row, then paid once when the chain answers', async function () {
    const net = requireLocalnet(this, L.net, "an unreachable chain needs localnet's faults");
    const { row, recipient } = await L.newPayout();
    // A first attempt needs a recent blockhash before it can be signed (and nothing else from the chain).
    net.faults.failNext({ kind: '500', method: 'getLatestBlockhash', count: 1_000_000 });
    const handbacks = await metricValue('oncepay_payout_worker_handbacks_total', { reason: 'chain_unavailable' });
    const finished: PayoutResult[] = [];
    const w = startPayoutWorker(
      workerOptions({
        db: smallPool(3),
        concurrency: 2,
        maxChainFailures: 3,
        chainBackoff: { baseMs: 400, capMs: 800 },
        onFinished: (r) => finished.push(r),
      }),
    );
    try {
      const deferred = await until(async () => {
        const p = (await getPayout(L.db.pool, row.id))!;
        return p.retries >= 2 ? p : undefined;
      }, 'two hand-backs');
      expect(deferred.state).to.equal('pending'); // nothing was signed: no blockhash could be read
      expect(await listAttempts(L.db.pool, row.id)).to.deep.equal([]);
      expect(
        await metricValue('oncepay_payout_worker_handbacks_total', { reason: 'chain_unavailable' }),
      ).to.be.at.least(handbacks + 2);
      net.faults.clear();
      await until(async () => finished.find((r) => r.id === row.id), 'the payout to finish');
    } finally {
      await w.stop({ graceMs: 5_000 });
    }
    await expectExactlyOneTransfer(L.connection, row, recipient);
    await expectJournalConsistent(L.db, L.connection, row);
  });

  it('stop(): a claim that completes after stop() began does not start the payout (no new work after SIGTERM)', async () => {
    const { row } = await L.newPayout();
    // Hold the claim statement: a table lock makes the worker's claim wait (SKIP LOCKED skips rows, not tables).
    const blocker = await L.db.pool.connect();
    let report;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE payouts IN ACCESS EXCLUSIVE MODE');
      const w = startPayoutWorker(workerOptions({ db: smallPool(2), concurrency: 1 }));
      await until(async () => {
        // The claim statement by its first words (pg_stat_activity keeps only the first 1 KiB of a statement).
        const { rows } = await L.db.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH held AS MATERIALIZED%'`,
        );
        return rows.length > 0 || undefined;
      }, 'the claim to wait on the lock');
      const stopped = w.stop({ graceMs: 5_000 });
      await blocker.query('COMMIT');
      report = await stopped;
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
    }
    expect(report.handedBack).to.deep.equal([]);
    expect(await listAttempts(L.db.pool, row.id)).to.deep.equal([]);
    expect((await getPayout(L.db.pool, row.id))!.state).to.equal('pending');
  });

  it('stop(): an attempt sent but unresolved is handed back (not abandoned), the gauges show it, the next worker resolves it once', async function () {
    const net = requireLocalnet(this, L.net, "status reads that fail until told otherwise need localnet's faults");
    const { row, recipient } = await L.newPayout();
    // The send reaches the node and executes, but no status can be read: the outcome stays unknown.
    net.faults.failNext({ kind: '500', method: 'getSignatureStatuses', count: 1_000_000 });
    // It never gives up on the chain by itself (10 failed looks take ~0.3 s): the hand-back under test is stop()'s.
    const w = startPayoutWorker(workerOptions({ db: smallPool(3), concurrency: 2, maxChainFailures: 1_000_000 }));
    let report;
    try {
      await until(
        async () => (await listAttempts(L.db.pool, row.id)).find((a) => a.status === 'sent'),
        'the attempt to be sent',
      );
    } finally {
      report = await w.stop({ graceMs: 200 });
    }
    expect(report.handedBack).to.deep.equal([row.id]);
    expect((await getPayout(L.db.pool, row.id))!.state).to.equal('executing');

    // Another worker (its gauges read the journal): the open attempt is visible until it is resolved.
    const finished: PayoutResult[] = [];
    const w2 = startPayoutWorker(
      workerOptions({ db: smallPool(3), concurrency: 1, onFinished: (r) => finished.push(r) }),
    );
    try {
      expect(await metricValue('oncepay_payout_uncertain_attempts')).to.equal(1);
      expect(await metricValue('oncepay_payout_oldest_uncertain_attempt_age_seconds')).to.be.greaterThan(0);
      net.faults.clear();
      await until(async () => finished.find((r) => r.id === row.id), 'the payout to finish');
      expect(await metricValue('oncepay_payout_uncertain_attempts')).to.equal(0);
    } finally {
      await w2.stop({ graceMs: 5_000 });
    }
    const attempts = await listAttempts(L.db.pool, row.id);
    expect(attempts.map((a) => a.status)).to.deep.equal(['landed']); // the same bytes: never re-signed
    await expectExactlyOneTransfer(L.connection, row, recipient);
    await expectJournalConsistent(L.db, L.connection, row);
  });
});
