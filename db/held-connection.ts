// One connection a component keeps while it has work in progress that belongs to its session — rows it holds with
// its session as the holder (db/session-holder.ts) — and gives back as soon as none is: PostgreSQL frees what the
// session held when the process dies or the connection breaks, and nothing stays checked out while idle (a pool can
// end, a test can drop its schema). Overlapping pieces of work share the one connection (its statements queue on it).
// After an error on it the connection is dropped (destroyed, not reused) and the next use takes a new one.
import type { Pool, PoolClient } from 'pg';

export interface HeldConnection {
  /** Do `work` while the connection is held; when the last piece of work in progress ends, it goes back. */
  hold<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Run statements on the held connection (inside `hold`): taken now if none is held; an error drops it and is
   * rethrown.
   */
  run<R>(use: (c: PoolClient) => Promise<R>): Promise<R>;
}

export function holdConnection(pool: Pool): HeldConnection {
  let held: Promise<PoolClient> | undefined;
  let broken: Error | undefined;
  let users = 0;
  // A terminated backend is reported here while the connection is held; without a listener pg's 'error' event
  // would end the process. The next use finds it broken and takes another.
  const onError = (e: Error) => (broken ??= e);
  // Only the held connection goes back, so each goes back once: statements that shared it fail together when its
  // backend is terminated, and each one's error reaches giveBack; a second release would throw (pg-pool) inside a
  // callback nobody awaits, an unhandled rejection that ends the process.
  const giveBack = (c: Promise<PoolClient> | undefined, err?: Error) => {
    if (c === undefined || held !== c) return;
    held = undefined;
    void c.then(
      (client) => {
        client.removeListener('error', onError);
        client.release(err);
      },
      () => undefined,
    );
  };
  async function run<R>(use: (c: PoolClient) => Promise<R>): Promise<R> {
    if (held && broken) {
      giveBack(held, broken);
      broken = undefined;
    }
    const c = (held ??= pool.connect().then((client) => {
      client.on('error', onError);
      return client;
    }));
    let client: PoolClient;
    try {
      client = await c;
    } catch (e) {
      if (held === c) held = undefined;
      throw e;
    }
    try {
      return await use(client);
    } catch (e) {
      giveBack(c, e as Error);
      broken = undefined;
      throw e;
    }
  }
  return {
    run,
    async hold(work) {
      users += 1;
      try {
        return await work();
      } finally {
        users -= 1;
        if (users === 0 && held) {
          giveBack(held, broken);
          broken = undefined;
        }
      }
    },
  };
}
