// One worker per payout row at a time: a session-level advisory lock on a dedicated connection, and that same
// connection does all of the payout's database work while it holds the lock (no second pool checkout: with one
// connection held per payout, a second checkout would starve as soon as the pool is full). If the worker dies
// (even by SIGKILL) or its connection is terminated, PostgreSQL releases the lock, so no lease can go stale — and
// the worker's later writes fail on the dead connection instead of going through another one: a worker that lost
// its lock can no longer write to the journal.
// The on-chain op account stays the final guard if two journals ever run without a shared database.
import { Pool, PoolClient } from 'pg';
import { OncepayError } from '../../common/errors';
import { PAYOUT_LOCK_TIMEOUT } from '../codes';

/**
 * The advisory lock key of the payout whose id is the SQL expression `id` (a bigint key from hashtextextended;
 * the prefix keeps payout keys apart from other advisory locks, and the schema keeps two journals on one server,
 * e.g. per-test schemas, apart as if they were two databases).
 */
export function payoutLockKey(id: string): string {
  return `hashtextextended('oncepay:payout:' || current_schema() || ':' || (${id})::text, 0)`;
}

/**
 * SQL: the advisory locks (bigint keys) held in this database right now, as pg_locks shows them — a key's high and
 * low 32 bits as classid and objid, objsubid 1. Read once per statement (MATERIALIZED), then matched per row with
 * payoutLockAmong.
 */
export const HELD_ADVISORY_LOCKS = `SELECT l.classid, l.objid FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/** SQL condition: the lock of payout `id` is among `held` (a relation of HELD_ADVISORY_LOCKS). */
export function payoutLockAmong(held: string, id: string): string {
  const key = payoutLockKey(id);
  return `EXISTS (SELECT 1 FROM ${held} h WHERE h.classid = ((${key} >> 32) & 4294967295)::oid AND h.objid = (${key} & 4294967295)::oid)`;
}

/** A connection checked out for one payout: the pool's 'error' listener is off while it is out, so it gets its own. */
export interface DedicatedConnection {
  client: PoolClient;
  /** Back to the pool; with an error (or after one was emitted) the connection is destroyed instead. */
  release(err?: Error): void;
}

export async function checkoutDedicated(pool: Pool, onError?: (e: Error) => void): Promise<DedicatedConnection> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A terminated backend or a restarted server is reported here while the connection is checked out; without a
  // listener, pg's 'error' event would end the process. The next query on the client fails and says so.
  const listener = (e: Error) => {
    broken ??= e;
    onError?.(e);
  };
  client.on('error', listener);
  let released = false;
  return {
    client,
    release(err?: Error) {
      if (released) return;
      released = true;
      client.removeListener('error', listener);
      client.release(err ?? broken);
    },
  };
}

export interface PayoutLock {
  /** The connection that holds the lock: run the payout's queries on it. */
  client: PoolClient;
  release(): Promise<void>;
}

/** Unlock and hand the connection back; destroying it (when unlocking fails) releases the lock too. */
export async function unlockPayout(conn: DedicatedConnection, id: string): Promise<void> {
  try {
    await conn.client.query(`SELECT pg_advisory_unlock(${payoutLockKey('$1::bigint')})`, [id]);
    conn.release();
  } catch (e) {
    conn.release(e as Error);
  }
}

/** `wait`: block up to timeoutMs; `skip`: return null at once if another worker holds the row. */
export async function lockPayout(
  pool: Pool,
  id: string,
  mode: 'wait' | 'skip',
  timeoutMs = 120_000,
): Promise<PayoutLock | null> {
  const conn = await checkoutDedicated(pool);
  const c = conn.client;
  const key = payoutLockKey('$1::bigint');
  try {
    if (mode === 'skip') {
      const { rows } = await c.query(`SELECT pg_try_advisory_lock(${key}) AS ok`, [id]);
      if (!rows[0].ok) {
        conn.release();
        return null;
      }
    } else {
      await c.query(`SELECT set_config('lock_timeout', $1, false)`, [`${Math.max(1, Math.floor(timeoutMs))}ms`]);
      try {
        await c.query(`SELECT pg_advisory_lock(${key})`, [id]);
      } catch (e) {
        if ((e as { code?: string }).code === '55P03') {
          throw new OncepayError(
            PAYOUT_LOCK_TIMEOUT,
            `payout ${id} is held by another worker for more than ${timeoutMs} ms`,
            { id },
          );
        }
        throw e;
      } finally {
        await c.query(`SELECT set_config('lock_timeout', '0', false)`).catch(() => undefined);
      }
    }
  } catch (e) {
    conn.release(e as Error);
    throw e;
  }
  let released = false;
  return {
    client: c,
    async release() {
      if (released) return;
      released = true;
      await unlockPayout(conn, id);
    },
  };
}
