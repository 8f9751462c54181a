// One LISTEN connection per process for "this invoice may have changed" (migration 0301 notifies
// `oncepay_invoice_changed` with "<schema> <ledger invoice id>" at the ledger's commit), fanned out to whoever watches
// that invoice: the checkout pages' live status (app/checkout) and the SDK's waitForPayment. db/listen holds it outside
// the caller's pool, so it never takes a request's connection. A hint only: while the connection is down (database
// restart, terminated backend) db/listen reconnects with backoff, and after each (re)connect every watcher is told to
// read again (what changed meanwhile is not lost, only late).
import { Pool } from 'pg';
import { Logger } from 'pino';
import { BackoffPolicy } from '../../common/backoff';
import { listen } from '../../db/listen';

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
  o: { lostMessage: string; reconnect?: BackoffPolicy },
): InvoiceEvents {
  const byInvoice = new Map<string, Set<() => void>>();
  let count = 0;

  // A copy of the set: a watcher may unsubscribe while it is told.
  const tell = (fns: Set<() => void> | undefined) => {
    for (const fn of [...(fns ?? [])]) fn();
  };
  const listener = listen(pool, {
    channel: INVOICE_CHANGED_CHANNEL,
    onNotify: (ledgerId) => tell(byInvoice.get(ledgerId)),
    // Changes while we were not listening: every watcher reads once.
    onListening: () => {
      for (const fns of byInvoice.values()) tell(fns);
    },
    log,
    reconnect: o.reconnect ?? { baseMs: 200, capMs: 10_000 },
    lostMessage: o.lostMessage,
  });

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
    stop: () => listener.stop(),
  };
}
