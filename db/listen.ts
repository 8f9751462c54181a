// LISTEN on a channel, on a connection of its own outside the pool (so it never takes a request's or a worker's
// connection), kept up until stopped. Our triggers notify "<schema>" or "<schema> <detail>" (migrations 0150, 0301):
// only the notifications of the schema this pool works in reach `onNotify`. A notification is a hint, never the
// record: while the connection is down (database restart, terminated backend, failover) it reconnects with the one
// backoff rule (common/backoff), and after each (re)connect `onListening` runs, so the caller reads once what may
// have changed while nobody listened.
import { Client, escapeIdentifier, Pool } from 'pg';
import { Logger } from 'pino';
import { BackoffPolicy, backoffDelay } from '../common/backoff';
import { clientClassOf } from './host-list';
import { currentSchema } from './queries';

export interface ListenOptions {
  /** The channel our triggers notify (a plain lower-case name). */
  channel: string;
  /** A notification of this pool's schema, with what follows "<schema> " in its payload ('' when nothing does). */
  onNotify(detail: string): void;
  /** After each (re)connect, once the LISTEN runs: what was notified while nobody listened is lost. */
  onListening(): void;
  log: Logger;
  /** Paces the reconnects after a lost connection. */
  reconnect: BackoffPolicy;
  /** The warning logged when the connection is lost (the consequence for the caller, e.g. "polling until …"). */
  lostMessage: string;
  /** Aborting it stops the listener, as stop() does. */
  signal?: AbortSignal;
}

export interface Listener {
  /** Stops reconnecting and ends the connection; resolves when it is closed. */
  stop(): Promise<void>;
}

/** The detail of a payload when it is this schema's ("<schema>" or "<schema> <detail>"), else null. */
export function schemaNotification(payload: string | undefined, schema: string): string | null {
  if (payload === schema) return '';
  if (payload?.startsWith(`${schema} `)) return payload.slice(schema.length + 1);
  return null;
}

export function listen(pool: Pool, opts: ListenOptions): Listener {
  let stopped = false;
  /** The one connection of this listener, from its creation (still connecting) until it is lost or stopped. */
  let client: Client | undefined;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    timer = undefined;
    if (stopped) return;
    // The pool's own Client class: with a multi-host URL, it connects to the writable server (the one NOTIFY runs on).
    const c = new (clientClassOf(pool))(pool.options);
    client = c;
    c.on('error', (e) => lost(c, e)); // a terminated backend or restarted server, while listening
    try {
      await c.connect();
      const q = currentSchema();
      const schema = (await c.query<{ schema: string }>(q.text, q.values)).rows[0]?.schema ?? '';
      c.on('notification', (n) => {
        if (n.channel !== opts.channel) return;
        const detail = schemaNotification(n.payload, schema);
        if (detail !== null) opts.onNotify(detail);
      });
      await c.query(`LISTEN ${escapeIdentifier(opts.channel)}`);
    } catch (e) {
      lost(c, e as Error);
      return;
    }
    if (client !== c) return; // stopped meanwhile (stop() ended it)
    failures = 0;
    opts.onListening();
  }

  /** `c` failed: end it; if it was the current connection and we are not stopping, connect again after a wait. */
  function lost(c: Client, e: Error): void {
    c.end().catch(() => undefined);
    if (client !== c) return; // an earlier connection's late error, or a stopped one
    client = undefined;
    failures += 1;
    const delayMs = backoffDelay(failures, opts.reconnect, Math.random());
    opts.log.warn({ err: e.message, delayMs, channel: opts.channel }, opts.lostMessage);
    timer = setTimeout(() => void connect(), delayMs);
  }

  async function stop(): Promise<void> {
    stopped = true;
    opts.signal?.removeEventListener('abort', onAbort);
    if (timer) clearTimeout(timer);
    const c = client;
    client = undefined;
    await c?.end().catch(() => undefined);
  }
  const onAbort = () => void stop();

  if (opts.signal?.aborted) return { stop };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  void connect();
  return { stop };
}
