// One connection a long-running component keeps for its whole life (checked out of its pool, never idle-closed), so
// that its session — the holder rows name (db/session-holder.ts) — lives exactly as long as the component's work
// does: the process dies, or the connection breaks, and PostgreSQL frees what it held. After any error on it the
// connection is dropped (destroyed, not reused) and the next use takes a new one, with a new session.
import type { Pool, PoolClient } from 'pg';

export interface HeldConnection {
  /** Run `use` on the held connection (taken now if none is held); an error drops it and is rethrown. */
  run<T>(use: (c: PoolClient) => Promise<T>): Promise<T>;
  /** Give the connection back to the pool (the component stops). */
  release(): void;
}

export function holdConnection(pool: Pool): HeldConnection {
  let held: Promise<PoolClient> | undefined;
  let broken: Error | undefined;
  // A terminated backend is reported here while the connection is held; without a listener pg's 'error' event
  // would end the process. The next use finds it broken and takes another.
  const onError = (e: Error) => (broken ??= e);
  const drop = async (c: Promise<PoolClient>, err: Error) => {
    if (held === c) held = undefined;
    broken = undefined;
    const client = await c.catch(() => undefined);
    if (!client) return;
    client.removeListener('error', onError);
    client.release(err);
  };
  return {
    async run(use) {
      if (held && broken) await drop(held, broken);
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
        await drop(c, e as Error);
        throw e;
      }
    },
    release() {
      const c = held;
      held = undefined;
      void c?.then(
        (client) => {
          client.removeListener('error', onError);
          client.release(broken);
        },
        () => undefined,
      );
    },
  };
}
