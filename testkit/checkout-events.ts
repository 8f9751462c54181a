// A client of the checkout page's event stream (GET /pay/<checkout id>/events, server-sent events), reading it as the
// page's script does: each `status` event's data is the status the page shows from then on.
import * as http from 'http';

export interface CheckoutEvents {
  /** The `status` events received so far, in order. */
  statuses: string[];
  /** Resolves once a `status` event with data `s` has arrived (at once if one already has). */
  next: (s: string) => Promise<void>;
  res: http.IncomingMessage;
  close: () => void;
}

/** Opens the stream at `url`; `onStatus` is called with each status as its event is parsed (before `next` resolves). */
export function openCheckoutEvents(url: string, onStatus?: (s: string) => void): Promise<CheckoutEvents> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      const statuses: string[] = [];
      const waiters: Array<{ s: string; done: () => void }> = [];
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const m = /^event: status\ndata: (.*)$/m.exec(block);
          if (!m) continue;
          onStatus?.(m[1]);
          statuses.push(m[1]);
          for (const w of waiters.filter((x) => x.s === m[1])) w.done();
        }
      });
      const next = (s: string) =>
        new Promise<void>((done) => (statuses.includes(s) ? done() : waiters.push({ s, done })));
      resolve({ statuses, next, res, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}
