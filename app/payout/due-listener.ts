// Wake-ups for the payout worker: LISTEN oncepay_payout_due (migration 0150 notifies it on every insert into
// payouts) on a connection of its own, outside the worker's pool so it never takes a slot's connection. A hint
// only: the worker keeps polling, and while this connection is down (database restart, terminated backend) it
// reconnects with backoff and the worker just polls.
import { Client, Pool } from 'pg';
import { Logger } from 'pino';
import { clientClassOf } from '../../db/host-list';
import { backoffDelay } from '../../common/backoff';
import { currentSchema } from './queries';

export const PAYOUT_DUE_CHANNEL = 'oncepay_payout_due';

export interface DueListener {
  stop(): Promise<void>;
}

/**
 * Calls `onDue` whenever a payout is inserted into the schema `pool` works in (and once after each (re)connect);
 * `reconnect` paces the reconnects after a lost connection.
 */
export function listenForDuePayouts(
  pool: Pool,
  onDue: () => void,
  log: Logger,
  reconnect: { baseMs: number; capMs: number },
): DueListener {
  let stopped = false;
  let client: Client | undefined;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    timer = undefined;
    if (stopped) return;
    // The pool's own Client class: with a multi-host URL, it connects to the writable server (the one NOTIFY runs on).
    const c = new (clientClassOf(pool))(pool.options);
    c.on('error', (e) => lost(c, e)); // a terminated backend or restarted server, while listening
    try {
      await c.connect();
      const q = currentSchema();
      const schema = (await c.query<{ schema: string }>(q.text, q.values)).rows[0]?.schema;
      c.on('notification', (n) => {
        if (n.channel === PAYOUT_DUE_CHANNEL && n.payload === schema) onDue();
      });
      await c.query(`LISTEN ${PAYOUT_DUE_CHANNEL}`);
    } catch (e) {
      lost(c, e as Error);
      return;
    }
    if (stopped) return void c.end().catch(() => undefined);
    client = c;
    failures = 0;
    onDue(); // inserts while we were not listening: look once
  }

  function lost(c: Client, e: Error): void {
    if (client === c) client = undefined;
    c.end().catch(() => undefined);
    if (stopped || timer) return;
    failures += 1;
    const delayMs = backoffDelay(failures, reconnect, Math.random());
    log.warn({ err: e.message, delayMs }, 'payout wake-ups lost (LISTEN connection); polling until it is back');
    timer = setTimeout(() => void connect(), delayMs);
  }

  void connect();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
