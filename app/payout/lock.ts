// One worker per payout row at a time: a session-level advisory lock on a dedicated connection. If the worker
// dies (even by SIGKILL) the connection closes and PostgreSQL releases the lock, so no lease can go stale.
// The on-chain op account stays the final guard if two journals ever run without a shared database.
import { Pool, PoolClient } from 'pg';
import { OncepayError } from '../../common/errors';
import { PAYOUT_LOCK_TIMEOUT } from '../codes';

// hashtextextended gives a bigint key; the prefix keeps payout keys apart from other advisory locks, and the
// schema keeps two journals on one server (e.g. per-test schemas) apart, as if they were two databases.
const KEY_SQL = `hashtextextended('oncepay:payout:' || current_schema() || ':' || $1::text, 0)`;

export interface PayoutLock {
  release(): Promise<void>;
}

/** `wait`: block up to timeoutMs; `skip`: return null at once if another worker holds the row. */
export async function lockPayout(pool: Pool, id: string, mode: 'wait' | 'skip', timeoutMs = 120_000): Promise<PayoutLock | null> {
  const c: PoolClient = await pool.connect();
  try {
    if (mode === 'skip') {
      const { rows } = await c.query(`SELECT pg_try_advisory_lock(${KEY_SQL}) AS ok`, [id]);
      if (!rows[0].ok) {
        c.release();
        return null;
      }
    } else {
      await c.query(`SELECT set_config('lock_timeout', $1, false)`, [`${Math.max(1, Math.floor(timeoutMs))}ms`]);
      try {
        await c.query(`SELECT pg_advisory_lock(${KEY_SQL})`, [id]);
      } catch (e) {
        if ((e as { code?: string }).code === '55P03') {
          throw new OncepayError(PAYOUT_LOCK_TIMEOUT, `payout ${id} is held by another worker for more than ${timeoutMs} ms`, { id });
        }
        throw e;
      } finally {
        await c.query(`SELECT set_config('lock_timeout', '0', false)`).catch(() => undefined);
      }
    }
  } catch (e) {
    c.release(e as Error);
    throw e;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await c.query(`SELECT pg_advisory_unlock(${KEY_SQL})`, [id]);
        c.release();
      } catch (e) {
        c.release(e as Error); // destroying the connection releases the lock too
      }
    },
  };
}
