// The payer's checkout page, public (registered outside the authenticated context): GET /pay/<checkout id> (HTML),
// GET /pay/<checkout id>/events (server-sent events: the status, pushed when the ledger changes the invoice), and its
// same-origin script and stylesheet. It reads, it never writes. Bounded: at most `maxStreams` event streams per
// process (then 503), each with a heartbeat, all closed when the app closes (drain, SIGTERM).
import { FastifyInstance, FastifyReply } from 'fastify';
import { Pool } from 'pg';
import * as QRCode from 'qrcode';
import { logger } from '../../common/log';
import { isCheckoutId } from '../invoice/checkout-id';
import { paymentUrl } from '../invoice/payment-url';
import { exceptionCount, getInvoiceByCheckoutId } from '../invoice/store';
import type { InvoiceRow } from '../invoice/types';
import { tokensOf } from '../invoice/tokens';
import { CHECKOUT_CSS, CHECKOUT_JS } from './assets';
import { listenForInvoiceChanges } from '../invoice/invoice-events';
import { CHECKOUT_CSP, checkoutPageHtml, CheckoutStatus, escapeHtml } from './page-html';

export interface CheckoutRoutesOptions {
  db: Pool;
  /** Event streams open at once in this process (default 1000); more get 503. */
  maxStreams?: number;
  /** A comment line on every stream this often (default 15 s), so proxies and clients see it alive. */
  heartbeatMs?: number;
}

const SECURITY_HEADERS = {
  'content-security-policy': CHECKOUT_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

async function statusOf(db: Pool, inv: InvoiceRow): Promise<CheckoutStatus> {
  return (await exceptionCount(db, inv.ledgerInvoiceId)) > 0 ? 'exception' : inv.status;
}

function notFound(reply: FastifyReply) {
  return reply
    .code(404)
    .headers({ ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' })
    .send(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><main><h1>No such checkout</h1></main></body></html>\n',
    );
}

export async function checkoutRoutes(app: FastifyInstance, opts: CheckoutRoutesOptions): Promise<void> {
  const { db } = opts;
  const maxStreams = opts.maxStreams ?? 1000;
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const log = logger('checkout');
  const events = listenForInvoiceChanges(db, log, {
    lostMessage: 'checkout live status lost (LISTEN connection); reconnecting',
  });
  const open = new Set<() => void>();
  // Before the server waits for its connections to end: an event stream never would by itself.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });
  app.addHook('onClose', async () => {
    for (const end of [...open]) end();
    await events.stop();
  });

  app.get('/pay/checkout.js', { schema: { hide: true } }, async (_req, reply) =>
    reply.headers({ ...SECURITY_HEADERS, 'content-type': 'text/javascript; charset=utf-8' }).send(CHECKOUT_JS),
  );
  app.get('/pay/checkout.css', { schema: { hide: true } }, async (_req, reply) =>
    reply.headers({ ...SECURITY_HEADERS, 'content-type': 'text/css; charset=utf-8' }).send(CHECKOUT_CSS),
  );

  app.get<{ Params: { checkoutId: string } }>('/pay/:checkoutId', { schema: { hide: true } }, async (req, reply) => {
    if (!isCheckoutId(req.params.checkoutId)) return notFound(reply);
    const inv = await getInvoiceByCheckoutId(db, req.params.checkoutId);
    if (!inv) return notFound(reply);
    const url = paymentUrl(inv);
    const qr = await QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    const html = checkoutPageHtml(
      {
        checkoutId: inv.checkoutId,
        amountTokens: tokensOf(inv.amount, inv.decimals),
        mint: inv.mint,
        label: inv.label,
        message: inv.message,
        paymentUrl: url,
        status: await statusOf(db, inv),
      },
      qr,
    );
    return reply.headers({ ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' }).send(html);
  });

  app.get<{ Params: { checkoutId: string } }>(
    '/pay/:checkoutId/events',
    { schema: { hide: true } },
    async (req, reply) => {
      if (!isCheckoutId(req.params.checkoutId)) return notFound(reply);
      const inv = await getInvoiceByCheckoutId(db, req.params.checkoutId);
      if (!inv) return notFound(reply);
      if (open.size >= maxStreams) {
        log.warn({ open: open.size }, 'checkout event stream refused: too many open');
        return reply
          .code(503)
          .headers({ ...SECURITY_HEADERS, 'retry-after': '5', 'content-type': 'text/plain; charset=utf-8' })
          .send(escapeHtml('too many live checkouts; refresh later\n'));
      }
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': 'text/event-stream; charset=utf-8',
        connection: 'keep-alive',
      });
      let last: CheckoutStatus | null = null;
      let reading = false;
      let again = false;
      const push = async () => {
        if (reading) return void (again = true);
        reading = true;
        try {
          do {
            again = false;
            const now = await getInvoiceByCheckoutId(db, inv.checkoutId);
            const s = now ? await statusOf(db, now) : null;
            if (s && s !== last && !res.writableEnded) {
              last = s;
              res.write(`event: status\ndata: ${s}\n\n`);
            }
          } while (again);
        } catch (e) {
          log.warn({ err: (e as Error).message }, 'checkout status read failed; the next change or heartbeat retries');
        } finally {
          reading = false;
        }
      };
      const unwatch = events.watch(inv.ledgerInvoiceId, () => void push());
      const beat = setInterval(() => {
        res.write(': heartbeat\n\n');
        void push(); // also catches a change whose notification was missed (an expiry, a reconnect)
      }, heartbeatMs);
      const end = () => {
        clearInterval(beat);
        unwatch();
        open.delete(end);
        if (!res.writableEnded) res.end();
      };
      open.add(end);
      req.raw.on('close', end);
      void push();
    },
  );
}
