// db/held-connection on a real PostgreSQL: one session shared by the statements of overlapping work, given back when
// the last piece ends, and dropped exactly once when its backend is terminated under several statements at once.
import { expect } from 'chai';
import { Pool } from 'pg';
import { holdConnection } from '../../db/held-connection';
import { createPool } from '../../db/pool';
import { createTestDb, TestDb } from '../../testkit/test-db';

describe('db/held-connection (real PostgreSQL)', () => {
  let db: TestDb;
  let pool: Pool;
  before(async () => {
    db = await createTestDb('held_connection');
    pool = createPool({ url: db.url, schema: db.schema, max: 3, applicationName: 'oncepay-held-test' });
  });
  after(async () => {
    await pool?.end();
    await db?.drop();
  });

  const backend = async (c: { query: Pool['query'] }) =>
    (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;

  it('overlapping work shares one session, and it goes back to the pool when the last piece ends', async () => {
    const held = holdConnection(pool);
    const pids = await held.hold(async () => {
      const inner = held.hold(() => held.run(backend));
      return [await held.run(backend), await inner];
    });
    expect(pids[0]).to.equal(pids[1]);
    expect(pool.totalCount - pool.idleCount).to.equal(0); // nothing left checked out
  });

  it('its backend terminated under two statements: both fail, the session is dropped once (nothing unhandled), the next use takes a new one', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const held = holdConnection(pool);
      let first = 0;
      await held.hold(async () => {
        first = await held.run(backend);
        // Two lanes on the one session (the webhook verifier's check does this): one running, one queued behind it.
        const running = held.run((c) => c.query('SELECT pg_sleep(30)'));
        const queued = held.run((c) => c.query('SELECT 1'));
        const both = Promise.allSettled([running, queued]);
        await db.pool.query('SELECT pg_terminate_backend($1)', [first]);
        const settled = await both;
        expect(settled.map((s) => s.status)).to.deep.equal(['rejected', 'rejected']);
      });
      // The drops run after the work has ended: give them their turn before looking.
      await new Promise((r) => setTimeout(r, 100));
      expect(unhandled.map(String)).to.deep.equal([]);
      const next = await held.hold(() => held.run(backend));
      expect(next).to.not.equal(first);
      expect(pool.totalCount - pool.idleCount).to.equal(0);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
