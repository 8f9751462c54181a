// The webhook receiver: `POST /v1/webhooks/:provider` takes provider deliveries of raw transactions (shapes in
// webhook-delivery.ts), authenticates them on the raw bytes (webhook-auth.ts), decodes each item and applies the
// good ones through the ledger with source 'webhook'. A redelivered event id is answered 2xx with
// `duplicate: true`; anything authenticated but unusable is kept in webhook_dead_letters, never lost.
// The body is read as raw bytes (not by fastify's JSON parser) because the HMAC covers the exact bytes and a
// malformed body must be authenticated before it is stored; so the body is validated here, not by a schema.
import * as crypto from 'crypto';
import Fastify, { FastifyError, FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { isOncepayError } from '../../common/errors';
import { failpoint } from '../../common/failpoint';
import { healthRoutes, replyIfDatabaseUnavailable } from '../../db/health-http';
import { decodeTransaction } from '../decode';
import type { Receipt } from '../decode/receipt';
import { WEBHOOK_CODES } from './codes';
import { LedgerPort, NO_METRICS, SourceMetrics } from './ports';
import { authenticate } from './webhook-auth';
import { eventIdOf, itemProblem, parseDelivery } from './webhook-delivery';
import { createWebhookStore, DeadLetter } from './webhook-store';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export interface WebhookAppOptions {
  db: Pool;
  ledger: Pick<LedgerPort, 'applyBatch'>;
  cluster: string;
  secret: string;
  requireSignature?: boolean;
  bodyLimit?: number;
  log?: Logger;
  metrics?: SourceMetrics;
  /** Serve GET /metrics from this registry. */
  registry?: Registry;
  /** Decoder of one transaction item (default: the indexer's decodeTransaction). */
  decode?: (item: unknown, cluster: string) => Receipt[];
}

const errorBody = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    deadLettered: { type: 'boolean' },
  },
} as const;

const okBody = {
  type: 'object',
  required: ['ok', 'duplicate', 'eventId', 'transactions', 'receipts', 'inserted', 'duplicates', 'deadLettered', 'rejected'],
  properties: {
    ok: { type: 'boolean' },
    duplicate: { type: 'boolean' },
    eventId: { type: ['string', 'null'] },
    transactions: { type: 'integer' },
    receipts: { type: 'integer' },
    inserted: { type: 'integer' },
    duplicates: { type: 'integer' },
    deadLettered: { type: 'integer' },
    rejected: {
      type: 'array',
      items: { type: 'object', required: ['index', 'code', 'message'], properties: { index: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' } } },
    },
  },
} as const;

export interface WebhookReply {
  ok: boolean;
  duplicate: boolean;
  eventId: string | null;
  transactions: number;
  receipts: number;
  inserted: number;
  duplicates: number;
  deadLettered: number;
  rejected: Array<{ index: number; code: string; message: string }>;
}

function httpError(status: number, code: string, message: string) {
  return Object.assign(new Error(message), { statusCode: status, code });
}

export function buildWebhookApp(opts: WebhookAppOptions): FastifyInstance {
  const store = createWebhookStore(opts.db);
  const metrics = opts.metrics ?? NO_METRICS;
  const log = opts.log;
  const decode = opts.decode ?? ((item: unknown, cluster: string) => decodeTransaction(item, { cluster }));
  const app = Fastify({ logger: false, bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (replyIfDatabaseUnavailable(err, reply)) return void log?.warn({ code: 'DATABASE_UNAVAILABLE', url: req.url, err: err.message }, 'webhook delivery refused: database unavailable');
    const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
    let code = (err as { code?: string }).code ?? WEBHOOK_CODES.INTERNAL;
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') code = WEBHOOK_CODES.BODY_TOO_LARGE;
    else if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') code = WEBHOOK_CODES.UNSUPPORTED_MEDIA_TYPE;
    else if (err.validation) code = WEBHOOK_CODES.INVALID_REQUEST;
    else if (!code.startsWith('ONCEPAY__')) code = status >= 500 ? WEBHOOK_CODES.INTERNAL : WEBHOOK_CODES.INVALID_REQUEST;
    if (status >= 500) log?.error({ err: err.message, url: req.url }, 'webhook request failed');
    else log?.warn({ code, status, url: req.url }, err.message);
    reply.status(status).send({ code, message: status >= 500 ? 'internal error' : err.message });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send({ code: WEBHOOK_CODES.NOT_FOUND, message: `no route ${req.method} ${req.url}` });
  });

  void app.register(healthRoutes, { db: opts.db });

  if (opts.registry) {
    const registry = opts.registry;
    app.get('/metrics', { schema: { response: { 200: { type: 'string' } } } }, async (_req, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  }

  app.post<{ Params: { provider: string } }>(
    '/v1/webhooks/:provider',
    {
      schema: {
        params: { type: 'object', required: ['provider'], properties: { provider: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,39}$' } } },
        headers: {
          type: 'object',
          properties: {
            'x-oncepay-signature': { type: 'string' },
            'x-oncepay-secret': { type: 'string' },
            'x-oncepay-event-id': { type: 'string' },
          },
        },
        response: { 200: okBody, 400: errorBody, 401: errorBody, 404: errorBody, 413: errorBody, 415: errorBody, 500: errorBody },
      },
    },
    async (req, reply) => {
      const provider = req.params.provider;
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const auth = authenticate({ secret: opts.secret, requireSignature: opts.requireSignature }, req.headers, raw);
      if (!auth.ok) {
        metrics.countWebhook(provider, 'unauthorized');
        log?.warn({ provider, reason: auth.reason, ip: req.ip }, 'webhook delivery refused: authentication');
        // Nothing about an unauthenticated request is stored: anyone could send it.
        throw httpError(401, WEBHOOK_CODES.UNAUTHORIZED, 'missing or wrong webhook credentials');
      }

      const refuseWhole = async (code: string, message: string, eventId: string | null) => {
        await store.deadLetter([{ provider, eventId, itemIndex: null, reason: code, detail: message, rawBody: raw }]);
        metrics.countWebhook(provider, 'dead_letter');
        log?.warn({ provider, code, eventId }, `webhook delivery dead-lettered: ${message}`);
        return reply.status(400).send({ code, message, deadLettered: true });
      };

      const parsed = parseDelivery(raw);
      const headerId = eventIdOf(req.headers, parsed.ok ? parsed.bodyEventId : null);
      if (!headerId.ok) return refuseWhole(WEBHOOK_CODES.INVALID_EVENT_ID, 'event id must be 1–200 printable ASCII characters', null);
      const eventId = headerId.eventId;
      if (!parsed.ok) return refuseWhole(parsed.code, parsed.message, eventId);

      const reply200 = (r: Partial<WebhookReply>): WebhookReply => ({
        ok: true,
        duplicate: false,
        eventId,
        transactions: 0,
        receipts: 0,
        inserted: 0,
        duplicates: 0,
        deadLettered: 0,
        rejected: [],
        ...r,
      });
      const bodySha256 = crypto.createHash('sha256').update(raw).digest('hex');
      let reused = false;
      if (eventId !== null) {
        const known = await store.findEvent(provider, eventId);
        if (known === bodySha256) {
          metrics.countWebhook(provider, 'duplicate');
          return reply200({ duplicate: true, transactions: parsed.items.length });
        }
        // Same event id, other bytes: a provider bug or a re-signed payload. Applying it is safe (the ledger
        // inserts each receipt once) and dropping it could lose a payment, so it is applied and flagged.
        if (known !== null) {
          reused = true;
          log?.warn({ provider, eventId }, 'webhook event id seen before with a different body; applying it');
        }
      }

      // Decode item by item: one bad item is dead-lettered, the others still count.
      const bad: Array<{ index: number; code: string; message: string }> = [];
      const receipts: Receipt[] = [];
      const itemOf: number[] = [];
      parsed.items.forEach((item, index) => {
        const problem = itemProblem(item);
        if (problem) {
          bad.push({ index, code: WEBHOOK_CODES.MALFORMED_TRANSACTION, message: problem });
          return;
        }
        try {
          for (const r of decode(item, opts.cluster)) {
            receipts.push(r);
            itemOf.push(index);
          }
        } catch (e) {
          if (!isOncepayError(e)) throw e;
          bad.push({ index, code: WEBHOOK_CODES.MALFORMED_TRANSACTION, message: e.message });
        }
      });

      // Apply first, record the event last: a crash in between means a redelivery re-applies (harmless, the
      // ledger inserts each receipt once) instead of a recorded event whose receipts were never applied.
      let inserted = 0;
      let duplicates = 0;
      if (receipts.length > 0) {
        const applied = await opts.ledger.applyBatch({ cluster: opts.cluster, source: 'webhook', receipts });
        inserted = applied.inserted;
        duplicates = applied.duplicates;
        for (const r of applied.rejected ?? []) {
          const index = itemOf[r.index];
          if (!bad.some((b) => b.index === index)) bad.push({ index, code: WEBHOOK_CODES.RECEIPT_REJECTED, message: `${r.code}: ${r.message}` });
        }
      }
      failpoint('webhook.after_apply');
      bad.sort((a, b) => a.index - b.index);
      const letters: DeadLetter[] = bad.map((b) => ({ provider, eventId, itemIndex: b.index, reason: b.code, detail: b.message, rawBody: raw }));
      await store.deadLetter(letters);
      if (bad.length > 0) log?.warn({ provider, eventId, bad }, 'webhook items dead-lettered');

      if (parsed.items.length > 0 && bad.length === parsed.items.length) {
        metrics.countWebhook(provider, 'dead_letter');
        return reply.status(400).send({ code: bad[0].code, message: `every item was refused; first: ${bad[0].message}`, deadLettered: true });
      }
      let duplicate = false;
      if (eventId !== null && !reused) {
        duplicate = !(await store.recordEvent({ provider, eventId, bodySha256, transactions: parsed.items.length, receipts: receipts.length, inserted, deadLettered: bad.length }));
      }
      metrics.countWebhook(provider, duplicate ? 'duplicate' : bad.length > 0 ? 'partial' : 'applied');
      log?.info({ provider, eventId, items: parsed.items.length, receipts: receipts.length, inserted, duplicates, deadLettered: bad.length }, 'webhook delivery applied');
      return reply200({ duplicate, transactions: parsed.items.length, receipts: receipts.length, inserted, duplicates, deadLettered: bad.length, rejected: bad });
    },
  );
  return app;
}
