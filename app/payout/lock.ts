// One worker per payout row at a time: a session-level advisory lock on a dedicated connection, and that same
// connection does all of the payout's database work while it holds the lock (no second pool checkout: with one
// connection held per payout, a second checkout would starve as soon as the pool is full). If the worker dies
// (even by SIGKILL) or its connection is terminated, PostgreSQL releases the lock, so no lease can go stale — and
// the worker's later writes fail on the dead connection instead of going through another one: a worker that lost
// its lock can no longer write to the journal.
// The on-chain op account stays the final guard if two journals ever run without a shared database.
import { Pool, PoolClient } from 'pg';
import { OncepayError } from '../../common/errors';
import { exec, one } from '../../db/sql';
import { PAYOUT_CODES } from '../../common/errors/codes';
import * as q from './queries';

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
    await exec(conn.client, q.unlockPayout(id));
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
  try {
    if (mode === 'skip') {
      if (!(await one<{ ok: boolean }>(c, q.tryLockPayout(id)))?.ok) {
        conn.release();
        return null;
      }
    } else {
      await exec(c, q.setLockTimeout(`${Math.max(1, Math.floor(timeoutMs))}ms`));
      try {
        await exec(c, q.lockPayout(id));
      } catch (e) {
        if ((e as { code?: string }).code === '55P03') {
          throw new OncepayError(
            PAYOUT_CODES.LOCK_TIMEOUT,
            `payout ${id} is held by another worker for more than ${timeoutMs} ms`,
            { id },
          );
        }
        throw e;
      } finally {
        await exec(c, q.setLockTimeout('0')).catch(() => undefined);
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
