// One LISTEN connection per process for the checkout pages' live status (migration 0301 notifies
// `oncepay_invoice_changed` with "<schema> <ledger invoice id>"), fanned out to the streams watching that invoice.
// Outside the API's pool, so it never takes a request's connection. A hint only: while the connection is down
// (database restart, terminated backend) it reconnects with backoff, and after each (re)connect every watcher is
// told to read again (what changed meanwhile is not lost, only late).
import { Client, Pool } from 'pg';
import { Logger } from 'pino';
import { clientClassOf } from '../../db/host-list';
import { backoffDelay } from '../../common/backoff';
import { currentSchema } from '../payout/queries';

export const INVOICE_CHANGED_CHANNEL = 'oncepay_invoice_changed';

export interface InvoiceEvents {
  /** Call `onChange` whenever the ledger invoice `ledgerId` may have changed; returns the unsubscribe. */
  watch(ledgerId: string, onChange: () => void): () => void;
  /** How many watchers there are now. */
  watchers(): number;
  stop(): Promise<void>;
}

export function listenForInvoiceChanges(
  pool: Pool,
  log: Logger,
  reconnect = { baseMs: 200, capMs: 10_000 },
): InvoiceEvents {
  const byInvoice = new Map<string, Set<() => void>>();
  let count = 0;
  let stopped = false;
  let client: Client | undefined;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;

  const tell = (fns: Iterable<() => void> | undefined) => {
    for (const fn of fns ?? []) fn();
  };
  const tellAll = () => {
    for (const fns of byInvoice.values()) tell([...fns]);
  };

  async function connect(): Promise<void> {
    timer = undefined;
    if (stopped) return;
    const c = new (clientClassOf(pool))(pool.options);
    c.on('error', (e) => lost(c, e));
    try {
      await c.connect();
      const q = currentSchema();
      const schema = (await c.query<{ schema: string }>(q.text, q.values)).rows[0]?.schema;
      c.on('notification', (n) => {
        if (n.channel !== INVOICE_CHANGED_CHANNEL || !n.payload) return;
        const space = n.payload.indexOf(' ');
        if (n.payload.slice(0, space) !== schema) return;
        const fns = byInvoice.get(n.payload.slice(space + 1));
        if (fns) tell([...fns]);
      });
      await c.query(`LISTEN ${INVOICE_CHANGED_CHANNEL}`);
    } catch (e) {
      lost(c, e as Error);
      return;
    }
    if (stopped) return void c.end().catch(() => undefined);
    client = c;
    failures = 0;
    tellAll(); // changes while we were not listening: every watcher reads once
  }

  function lost(c: Client, e: Error): void {
    if (client === c) client = undefined;
    c.end().catch(() => undefined);
    if (stopped || timer) return;
    failures += 1;
    const delayMs = backoffDelay(failures, reconnect, Math.random());
    log.warn({ err: e.message, delayMs }, 'checkout live status lost (LISTEN connection); reconnecting');
    timer = setTimeout(() => void connect(), delayMs);
  }

  void connect();
  return {
    watch(ledgerId, onChange) {
      let fns = byInvoice.get(ledgerId);
      if (!fns) byInvoice.set(ledgerId, (fns = new Set()));
      fns.add(onChange);
      count += 1;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        count -= 1;
        fns!.delete(onChange);
        if (fns!.size === 0) byInvoice.delete(ledgerId);
      };
    },
    watchers: () => count,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
