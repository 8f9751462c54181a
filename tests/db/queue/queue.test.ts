// db/queue: the one queue mechanism, on a queue of its own (a toy business table in a fresh schema): the claim
// statement (SKIP LOCKED side by side, a lease taken over once it ran out, the attempt counted at claim time), the
// backoff written in SQL against common/backoff.ts's rule, the dead letter, and the policy's pure answers. The
// three real queues (outbox, webhook hints, payouts) are configurations of it; their own suites test them.
import { expect } from 'chai';
import type { Pool, PoolClient } from 'pg';
import { Registry } from 'prom-client';
import { backoffDelay } from '../../../common/backoff';
import {
  afterFailure,
  backoffInterval,
  claimStatement,
  deadOrRetry,
  leaseUntil,
  policyProblems,
  queueMetrics,
  type ClaimSpec,
  type QueuePolicy,
} from '../../../db/queue';
import { exec, one, rows, type Query } from '../../../db/sql';
import { createTestDb, type TestDb } from '../../../testkit/test-db';

/** A queue of jobs: pending → running (leased) → done, or dead after `max` attempts. */
const JOBS: ClaimSpec = {
  table: 'jobs',
  alias: 'j',
  due: {
    where: `(j.state = 'pending' AND j.next_attempt_at <= now()) OR (j.state = 'running' AND j.lease_until <= now())`,
    orderBy: 'j.next_attempt_at, j.id',
    limit: '$1',
  },
  set: [`state = 'running'`, 'attempts = j.attempts + 1', leaseUntil('lease_until', '$2')],
  returning: 'j.id::int AS id, j.attempts',
};
const claim = (limit: number, leaseMs: number): Query => ({ text: claimStatement(JOBS), values: [limit, leaseMs] });
const fail = (id: number, max: number, baseMs: number, capMs: number): Query => ({
  text: `UPDATE jobs SET state = ${deadOrRetry('attempts', '$2', `'dead'`, `'pending'`)},
                next_attempt_at = now() + ${backoffInterval('attempts', '$3', '$4')}, lease_until = NULL
          WHERE id = $1 AND state = 'running' RETURNING state`,
  values: [id, max, baseMs, capMs],
});

const POLICY: QueuePolicy = {
  queue: 'outbox',
  batch: 10,
  hold: { leaseMs: 60_000, session: false },
  backoff: { baseMs: 1000, capMs: 8000 },
  deadLetter: { after: 'attempts', max: 3 },
};

describe('db/queue: one claim statement, one policy, one set of metrics', () => {
  let db: TestDb;
  let pool: Pool;
  before(async () => {
    db = await createTestDb('queue_mechanism');
    pool = db.pool;
    await pool.query(`CREATE TABLE jobs (
      id bigserial PRIMARY KEY, state text NOT NULL DEFAULT 'pending', attempts int NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz)`);
  });
  after(async () => db?.drop());
  beforeEach(() => pool.query('TRUNCATE jobs'));
  const add = (n: number) => exec(pool, { text: 'INSERT INTO jobs SELECT FROM generate_series(1, $1)', values: [n] });

  it('builds one statement: the pick under FOR UPDATE OF the table SKIP LOCKED, the hold in the same UPDATE', () => {
    const text = claimStatement(JOBS);
    expect(text).to.match(
      /picked AS \(SELECT j\.id FROM jobs j WHERE \(.*\) ORDER BY .* LIMIT \$1 FOR UPDATE OF j SKIP LOCKED\)/,
    );
    expect(text).to.match(
      /UPDATE jobs j SET state = 'running', attempts = j\.attempts \+ 1, lease_until = .* FROM picked WHERE j\.id = picked\.id RETURNING/,
    );
    const wrapped = claimStatement({ ...JOBS, with: ['x AS (SELECT 1)'], select: 'SELECT * FROM claimed' });
    expect(wrapped).to.match(
      /^WITH x AS \(SELECT 1\),\npicked AS .*,\nclaimed AS \(UPDATE jobs j .*\)\nSELECT \* FROM claimed$/s,
    );
  });

  it('claims each due row once, counting the attempt, even when claims run side by side', async () => {
    await add(20);
    // Two transactions claim at once: the second skips what the first holds instead of waiting or taking it too.
    const a: PoolClient = await pool.connect();
    const b: PoolClient = await pool.connect();
    try {
      await a.query('BEGIN');
      await b.query('BEGIN');
      const first = await rows<{ id: number; attempts: number }>(a, claim(12, 60_000));
      const second = await rows<{ id: number; attempts: number }>(b, claim(12, 60_000));
      await a.query('COMMIT');
      await b.query('COMMIT');
      expect(first).to.have.length(12);
      expect(second).to.have.length(8);
      const ids = [...first, ...second].map((r) => r.id);
      expect(new Set(ids).size).to.equal(20);
      expect([...first, ...second].every((r) => r.attempts === 1)).to.equal(true);
    } finally {
      a.release();
      b.release();
    }
    expect(await rows(pool, claim(10, 60_000)), 'every row is held by a live lease').to.have.length(0);
  });

  it('takes a row over once its lease ran out (its worker died), and counts a second attempt', async () => {
    await add(1);
    const [held] = await rows<{ id: number; attempts: number }>(pool, claim(1, 0));
    expect(held.attempts).to.equal(1);
    const [again] = await rows<{ id: number; attempts: number }>(pool, claim(1, 60_000));
    expect(again).to.deep.equal({ id: held.id, attempts: 2 });
    expect(await rows(pool, claim(1, 60_000))).to.have.length(0);
  });

  it('a failed attempt waits its backoff, and the row is dead after the last attempt', async () => {
    await add(1);
    const states: string[] = [];
    for (let i = 0; i < 3; i++) {
      // Due again at once for the test: the backoff's own values are checked below.
      await exec(pool, { text: 'UPDATE jobs SET next_attempt_at = now()', values: [] });
      const [c] = await rows<{ id: number }>(pool, claim(1, 60_000));
      states.push((await one<{ state: string }>(pool, fail(c.id, 3, 1000, 8000)))!.state);
      if (i === 0) expect(await rows(pool, claim(1, 60_000)), 'not due before its backoff').to.have.length(0);
    }
    expect(states).to.deep.equal(['pending', 'pending', 'dead']);
    await exec(pool, { text: 'UPDATE jobs SET next_attempt_at = now()', values: [] });
    expect(await rows(pool, claim(1, 60_000)), 'a dead row is never claimed').to.have.length(0);
  });

  it("the SQL backoff is common/backoff.ts's rule: within [half step, step] of min(base·2^(n−1), cap), spread", async () => {
    const policy = { baseMs: 100, capMs: 2000 };
    for (const retry of [0, 1, 2, 3, 5, 8, 40, 1000]) {
      const got = await rows<{ ms: number }>(pool, {
        text: `SELECT extract(epoch FROM ${backoffInterval('$1::int', '$2', '$3')}) * 1000 AS ms FROM generate_series(1, 200)`,
        values: [retry, policy.baseMs, policy.capMs],
      });
      const ms = got.map((r) => Number(r.ms));
      const low = backoffDelay(retry, policy, 0);
      const high = backoffDelay(retry, policy, 1);
      for (const v of ms) {
        expect(v, `retry ${retry}`).to.be.at.least(low);
        expect(v, `retry ${retry}`).to.be.at.most(high);
      }
      if (retry >= 1) expect(new Set(ms).size, `retry ${retry}: jittered`).to.be.greaterThan(100);
    }
  });

  it('the policy: dead after max attempts or past its age, else the backoff of its attempt count', () => {
    expect(afterFailure(POLICY, { attempts: 1 }, 0)).to.deep.equal({ next: 'retry', delayMs: 500 });
    expect(afterFailure(POLICY, { attempts: 2 }, 0.999999)).to.deep.equal({ next: 'retry', delayMs: 1999 });
    expect(afterFailure(POLICY, { attempts: 3 }, 0.5)).to.deep.equal({ next: 'dead' });
    const aged: QueuePolicy = { ...POLICY, deadLetter: { after: 'age' } };
    expect(afterFailure(aged, { attempts: 50, expired: false }, 0)).to.deep.equal({ next: 'retry', delayMs: 4000 });
    expect(afterFailure(aged, { attempts: 1, expired: true }, 0)).to.deep.equal({ next: 'dead' });
    const never: QueuePolicy = { ...POLICY, deadLetter: { after: 'never', why: 'the executor decides' } };
    expect(afterFailure(never, { attempts: 10_000 }, 0)).to.deep.equal({ next: 'retry', delayMs: 4000 });
    expect(afterFailure(never, { attempts: 0 }, 0), 'no attempt yet: the first step').to.deep.equal({
      next: 'retry',
      delayMs: 500,
    });
  });

  it('the policy names what it gets wrong', () => {
    expect(policyProblems(POLICY)).to.deep.equal([]);
    expect(
      policyProblems({
        ...POLICY,
        batch: 0,
        hold: { session: false },
        backoff: { baseMs: Number.NaN, capMs: 1 },
        deadLetter: { after: 'attempts', max: 0 },
      }),
    ).to.deep.equal([
      'batch must be a number ≥ 1, got 0',
      'a hold needs a lease, the session, or both',
      'backoff.baseMs must be a number ≥ 0, got NaN',
      'deadLetter.max must be a number ≥ 1, got 0',
    ]);
  });

  it('one set of metrics labelled by queue, every series present from the start, shared in a registry', async () => {
    const registry = new Registry();
    const outbox = queueMetrics('outbox', registry);
    const payouts = queueMetrics('payouts', registry);
    outbox.claimed(3);
    outbox.settled('done', 2);
    outbox.settled('dead');
    payouts.settled('released');
    const text = await registry.metrics();
    expect(text).to.include('oncepay_queue_claimed_total{queue="outbox"} 3');
    expect(text).to.include('oncepay_queue_claimed_total{queue="payouts"} 0');
    expect(text).to.include('oncepay_queue_settled_total{queue="outbox",outcome="done"} 2');
    expect(text).to.include('oncepay_queue_settled_total{queue="outbox",outcome="dead"} 1');
    expect(text).to.include('oncepay_queue_settled_total{queue="outbox",outcome="retry"} 0');
    expect(text).to.include('oncepay_queue_settled_total{queue="payouts",outcome="released"} 1');
    expect(text).not.to.include('queue="webhook_hints"');
  });
});
