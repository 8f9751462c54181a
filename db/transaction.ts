// One transaction on one pooled client: BEGIN, the work, COMMIT; ROLLBACK (best effort) and rethrow on any error;
// the client always goes back to the pool.
import type { Pool, PoolClient } from 'pg';

/** Run `work` in one transaction on a client of `pool`. */
export async function inTransaction<T>(pool: Pool, work: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const out = await work(c);
    await c.query('COMMIT');
    return out;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}
