// db/pool.ts on the real server: PostgreSQL ending a session (here idle_session_timeout, 57P05, set on the session
// itself so no other suite is touched) must not end the process — neither for an idle pooled client nor for one
// that is checked out between two queries — and the next query connects again. Without the pool's handlers pg
// emits an unhandled 'error' and mocha reports an uncaught exception.
import { expect } from 'chai';
import { createPool } from '../../db/pool';
import { resolveDatabaseUrl } from '../../db/local-server';
import { isDatabaseUnavailable } from '../../db/unavailable';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('db/pool: sessions ended by the server', () => {
  it('an idle pooled client timed out by the server is dropped; the next query reconnects', async () => {
    const pool = createPool({ url: resolveDatabaseUrl(), max: 1, applicationName: 'oncepay-pool-test' });
    try {
      const c = await pool.connect();
      const before = (await c.query(`SELECT pg_backend_pid() AS pid, set_config('idle_session_timeout', '100', false)`))
        .rows[0].pid;
      c.release();
      await sleep(600); // the server ends the idle session (FATAL 57P05)
      const after = (
        await pool.query('SELECT pg_backend_pid() AS pid, current_setting($1) AS name', ['application_name'])
      ).rows[0];
      expect(after.pid).to.not.equal(before);
      expect(after.name).to.equal('oncepay-pool-test');
    } finally {
      await pool.end();
    }
  });

  it('a checked-out client whose session ends between two queries: its next query fails as an outage, the pool goes on', async () => {
    const pool = createPool({ url: resolveDatabaseUrl(), max: 1 });
    try {
      const c = await pool.connect();
      await c.query(`SELECT set_config('idle_session_timeout', '100', false)`);
      await sleep(600);
      const e = await c.query('SELECT 1').then(
        () => null,
        (x: Error) => x,
      );
      expect(e, 'the query on the dead session must fail').to.be.instanceOf(Error);
      expect(isDatabaseUnavailable(e), String(e)).to.equal(true);
      c.release();
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).to.equal(1);
    } finally {
      await pool.end();
    }
  });
});
