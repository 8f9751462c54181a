// The webhook receiver: `POST /v1/webhooks/:provider` takes provider deliveries (shapes in webhook-delivery.ts)
// and authenticates them on the raw bytes with a timestamped HMAC (webhook-auth.ts).
//
// A delivery is a hint; the chain is the truth. By default every transaction signature a delivery names is held
// durably as a pending hint (webhook_hints) in the same database transaction as the event record and the dead
// letters, then checked against the chain at once (webhook-verifier.ts: getTransaction, decode the chain's own
// transaction, apply through the ledger); what the chain does not show within the request's short deadline is
// checked again by the background loop of the same process. The answer is 200 when every hint is settled, 202
// when some are still pending (durably held: a provider must not redeliver them, and need not). Nothing the
// delivery itself says is ever credited; where it disagrees with the chain, the chain wins and it is counted.
//
// `trustProvider` (`--trust-provider`) opts out: the delivery's own transactions are decoded (their transfers
// still cross-checked against their token balances) and applied at once, as before verification existed.
//
// Nothing a stranger sends is kept or counted under a name of theirs: a request the headers alone refuse (no
// credentials, a malformed signature, a provider name outside the pattern) is answered before its body is read, with
// `Connection: close`; metric labels are configured provider names or the fixed `unknown`; refusal log lines are
// throttled per kind. A provider bucket (a configured name, or `unknown` for every other) holds at most
// `maxPendingHints` pending hints: a delivery past it is refused 429 with Retry-After, nothing stored, counted.
//
// A redelivered event id is answered 2xx with `duplicate: true`; anything authenticated but unusable is kept in
// webhook_dead_letters, never lost. The body is read as raw bytes (not by fastify's JSON parser) because the HMAC
// covers the exact bytes and a malformed body must be authenticated before it is stored; so the body is validated
// here, not by a schema. Errors are the one HTTP error shape of app/api/errors.ts: { code, message }.
import Fastify, { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { OncepayError } from '../../common/errors';
import { throttledWarn } from '../../common/throttled-log';
import { fastifyRefusal, HttpError, httpErrorBodySchema, sendHttpError } from '../../common/errors/http';
import { failpoint } from '../../common/failpoint';
import { healthRoutes, replyIfDatabaseUnavailable } from '../../db/health-http';
import { decodeTransaction } from '../decode';
import type { Receipt } from '../decode/receipt';
import { SOURCE_CODES, WEBHOOK_CODES } from '../../common/errors/codes';
import { LedgerPort, NO_METRICS, SourceMetrics } from './ports';
import { DEFAULT_TOLERANCE_S, precheckCredentials } from './webhook-auth';
import { NO_WEBHOOK_METRICS, WebhookMetrics } from './webhook-metrics';
import { ItemRefusal, planDelivery, unauthorizedPlan } from './webhook-plan';
import { withTransaction } from '../../db/sql';
import { createWebhookStore, DeadLetter } from './webhook-store';
import { DEFAULT_MAX_PENDING_HINTS, type ChainVerifier } from './webhook-verifier';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
export const DEFAULT_INLINE_CHECK_MS = 2_000;
/** What a provider is told to wait after a 429 (its bucket of pending hints is full). */
export const HINTS_RETRY_AFTER_S = 30;
/** A provider name in the URL: the pattern the route accepts (anything else is 400 before the body). */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
/** The metric label and cap bucket of every provider name that is not configured. */
export const UNKNOWN_PROVIDER = 'unknown';

export interface WebhookAppOptions {
  db: Pool;
  ledger: Pick<LedgerPort, 'applyBatch'>;
  cluster: string;
  /** Shared secret(s): several while rotating (a delivery signed with any of them is accepted). */
  secret: string | readonly string[];
  /** Largest |now − t| of a signature, in seconds (default 300). */
  signatureToleranceS?: number;
  /** Deprecated: also accept the untimestamped `sha256=` HMAC and the bare secret. */
  legacySignature?: boolean;
  /** Legacy mode only: demand the legacy HMAC (a bare secret is not enough). */
  requireSignature?: boolean;
  /** Checks every delivery's signatures against the chain. Required unless trustProvider. */
  verifier?: ChainVerifier;
  /** How long a delivery waits for the first check of its own hints before answering (default 2 s). */
  inlineCheckMs?: number;
  /** Opt out of chain verification: credit the delivery's own (balance-checked) transactions. */
  trustProvider?: boolean;
  bodyLimit?: number;
  /**
   * The provider names configured (`--provider`): each has its own metric label and its own cap of pending hints;
   * every other name is labelled and capped as `unknown` (its deliveries are still accepted when authenticated).
   */
  providers?: readonly string[];
  /** Pending hints one provider bucket may hold (default 1000); a delivery past it is refused 429. */
  maxPendingHints?: number;
  log?: Logger;
  metrics?: SourceMetrics;
  webhookMetrics?: WebhookMetrics;
  /** Serve GET /metrics from this registry. */
  registry?: Registry;
  /** Decoder of one transaction item (default: the indexer's decodeTransaction). */
  decode?: (item: unknown, cluster: string) => Receipt[];
  /** Unix seconds now (tests). */
  nowS?: () => number;
}

const okBody = {
  type: 'object',
  required: [
    'ok',
    'duplicate',
    'eventId',
    'transactions',
    'receipts',
    'inserted',
    'duplicates',
    'deadLettered',
    'rejected',
  ],
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
      items: {
        type: 'object',
        required: ['index', 'code', 'message'],
        properties: { index: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
    verified: { type: 'boolean' },
    credited: { type: 'integer' },
    pending: { type: 'integer' },
    dropped: { type: 'integer' },
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
  /** Verified against the chain (false only with trustProvider). */
  verified: boolean;
  /** Hints (signatures) the chain confirmed and that are applied. */
  credited: number;
  /** Hints durably held, not yet confirmed by the chain: checked again in the background. */
  pending: number;
  /** Hints the chain refuted (failed, refused, never seen). */
  dropped: number;
}

export function buildWebhookApp(opts: WebhookAppOptions): FastifyInstance {
  if (!opts.trustProvider && !opts.verifier) {
    throw new OncepayError(
      SOURCE_CODES.INVALID_OPTION,
      'the webhook needs a chain verifier (an RPC endpoint), or trustProvider to opt out explicitly',
    );
  }
  const store = createWebhookStore(opts.db);
  const metrics = opts.metrics ?? NO_METRICS;
  const webhookMetrics = opts.webhookMetrics ?? NO_WEBHOOK_METRICS;
  const log = opts.log;
  const decode = opts.decode ?? ((item: unknown, cluster: string) => decodeTransaction(item, { cluster }));
  const nowS = opts.nowS ?? (() => Math.floor(Date.now() / 1000));
  const secrets = typeof opts.secret === 'string' ? [opts.secret] : [...opts.secret];
  const policy = {
    auth: {
      secrets,
      toleranceS: opts.signatureToleranceS ?? DEFAULT_TOLERANCE_S,
      legacy: opts.legacySignature,
      requireSignature: opts.requireSignature,
    },
    cluster: opts.cluster,
    trustProvider: opts.trustProvider ?? false,
    decode,
  };
  const app = Fastify({ logger: false, bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT });
  const known = [...(opts.providers ?? [])];
  /** The label (and cap bucket) of a provider name: configured, or `unknown` — never a name a sender chose. */
  const label = (provider: string) => (known.includes(provider) ? provider : UNKNOWN_PROVIDER);
  const maxPendingHints = opts.maxPendingHints ?? DEFAULT_MAX_PENDING_HINTS;
  const refusalLog = throttledWarn(log);

  if (opts.trustProvider)
    log?.warn(
      'webhook deliveries are NOT verified against the chain (--trust-provider): whoever holds the secret can credit anything',
    );
  if (opts.legacySignature)
    log?.warn(
      'the deprecated untimestamped webhook signature and bare secrets are accepted (--legacy-signature): captured deliveries can be replayed',
    );

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  const sendError = (reply: FastifyReply, status: number, code: string, message: string) =>
    sendHttpError(reply, new HttpError(status, code, message));

  /** Any error a request ended with → the webhook's answer: its own HttpErrors as they are, fastify's refusals
   * and foreign errors under an ONCEPAY__WEBHOOK__* code. */
  const toHttpError = (err: FastifyError): HttpError => {
    if (err instanceof HttpError) return err;
    const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
    const refusal = fastifyRefusal(err);
    let code = (err as { code?: string }).code ?? WEBHOOK_CODES.INTERNAL;
    if (refusal === 'body_too_large') code = WEBHOOK_CODES.BODY_TOO_LARGE;
    else if (refusal === 'media_type_unsupported') code = WEBHOOK_CODES.UNSUPPORTED_MEDIA_TYPE;
    else if (refusal === 'schema_invalid') code = WEBHOOK_CODES.INVALID_REQUEST;
    else if (!code.startsWith('ONCEPAY__'))
      code = status >= 500 ? WEBHOOK_CODES.INTERNAL : WEBHOOK_CODES.INVALID_REQUEST;
    return new HttpError(status, code, status >= 500 ? 'internal error' : err.message);
  };

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (replyIfDatabaseUnavailable(err, reply))
      return void log?.warn(
        { code: 'DATABASE_UNAVAILABLE', url: req.url, err: err.message },
        'webhook delivery refused: database unavailable',
      );
    const e = toHttpError(err);
    if (e.status >= 500) log?.error({ err: err.message, url: req.url }, 'webhook request failed');
    // A refusal anyone can provoke: one line per kind per interval, never one per request.
    else refusalLog(e.code, { code: e.code, status: e.status, url: req.url.slice(0, 200) }, err.message);
    if (e.status === 429) reply.header('retry-after', String(HINTS_RETRY_AFTER_S));
    void sendHttpError(reply, e);
  });
  app.setNotFoundHandler((req, reply) => {
    void sendError(reply, 404, WEBHOOK_CODES.NOT_FOUND, `no route ${req.method} ${req.url}`);
  });

  void app.register(healthRoutes, { db: opts.db });

  if (opts.registry) {
    const registry = opts.registry;
    app.get('/metrics', { schema: { response: { 200: { type: 'string' } } } }, async (_req, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  }

  const errorBody = httpErrorBodySchema;
  app.post<{ Params: { provider: string } }>(
    '/v1/webhooks/:provider',
    {
      // Before the body is read (fastify parses it after onRequest): what the URL and the headers alone refuse costs
      // no body buffer, and `Connection: close` spares reading the rest of it at all.
      onRequest: async (req, reply) => {
        const provider = (req.params as { provider?: string }).provider ?? '';
        if (!PROVIDER_NAME.test(provider)) {
          reply.header('connection', 'close');
          metrics.countWebhook(UNKNOWN_PROVIDER, 'invalid_provider');
          throw new HttpError(
            400,
            WEBHOOK_CODES.INVALID_REQUEST,
            'the provider name must match [a-z0-9][a-z0-9_-]{0,39}',
          );
        }
        const failure = precheckCredentials(policy.auth, req.headers);
        if (failure !== null) {
          const plan = unauthorizedPlan(failure);
          reply.header('connection', 'close');
          metrics.countWebhook(label(provider), 'unauthorized');
          webhookMetrics.countVerificationFailure(plan.failure);
          refusalLog(
            plan.code,
            { provider: label(provider), reason: plan.reason, ip: req.ip },
            'webhook delivery refused: authentication',
          );
          throw new HttpError(401, plan.code, plan.message);
        }
      },
      schema: {
        params: {
          type: 'object',
          required: ['provider'],
          properties: { provider: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,39}$' } },
        },
        headers: {
          type: 'object',
          properties: {
            'x-oncepay-signature': { type: 'string' },
            'x-oncepay-secret': { type: 'string' },
            'x-oncepay-event-id': { type: 'string' },
          },
        },
        response: {
          200: okBody,
          202: okBody,
          400: errorBody,
          401: errorBody,
          404: errorBody,
          413: errorBody,
          415: errorBody,
          429: errorBody,
          500: errorBody,
        },
      },
    },
    async (req, reply) => {
      const provider = req.params.provider;
      const bucket = label(provider);
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const plan = planDelivery(raw, req.headers, { ...policy, nowS: nowS() });
      if (plan.action === 'unauthorized') {
        metrics.countWebhook(bucket, 'unauthorized');
        webhookMetrics.countVerificationFailure(plan.failure);
        refusalLog(
          plan.code,
          { provider: bucket, reason: plan.reason, ip: req.ip },
          'webhook delivery refused: authentication',
        );
        throw new HttpError(401, plan.code, plan.message);
      }
      if (plan.action === 'refuse') {
        const { code, message, eventId } = plan;
        await store.deadLetter([{ provider, eventId, itemIndex: null, reason: code, detail: message, rawBody: raw }]);
        metrics.countWebhook(bucket, 'dead_letter');
        log?.warn({ provider, code, eventId }, `webhook delivery dead-lettered: ${message}`);
        return sendError(reply, 400, code, `${message} (the delivery is kept in webhook_dead_letters)`);
      }

      const { eventId } = plan;
      const answer = (status: number, r: Partial<WebhookReply>) =>
        reply.status(status).send({
          ok: true,
          duplicate: false,
          eventId,
          transactions: plan.items,
          receipts: 0,
          inserted: 0,
          duplicates: 0,
          deadLettered: 0,
          rejected: [],
          verified: !opts.trustProvider,
          credited: 0,
          pending: 0,
          dropped: 0,
          ...r,
        } satisfies WebhookReply);
      let reused = false;
      if (eventId !== null) {
        const known = await store.findEvent(provider, eventId);
        if (known === plan.bodySha256) {
          metrics.countWebhook(bucket, 'duplicate');
          return answer(200, { duplicate: true });
        }
        // Same event id, other bytes: a provider bug or a re-signed payload. Processing it is safe (hints and
        // receipts are idempotent) and dropping it could lose a payment, so it is processed and flagged.
        if (known !== null) {
          reused = true;
          log?.warn({ provider, eventId }, 'webhook event id seen before with a different body; processing it');
        }
      }
      for (const f of plan.failures) webhookMetrics.countVerificationFailure(f);

      const bad: ItemRefusal[] = [...plan.refused];
      const deadLetters = () => {
        bad.sort((a, b) => a.index - b.index);
        if (bad.length > 0) log?.warn({ provider, eventId, bad }, 'webhook items dead-lettered');
        return bad.map((b): DeadLetter => ({
          provider,
          eventId,
          itemIndex: b.index,
          reason: b.code,
          detail: b.message,
          rawBody: raw,
        }));
      };
      const allRefused = () => {
        metrics.countWebhook(bucket, 'dead_letter');
        return sendError(
          reply,
          400,
          bad[0].code,
          `every item was refused (kept in webhook_dead_letters); first: ${bad[0].message}`,
        );
      };
      const event = (receipts: number, inserted: number) => ({
        provider,
        eventId: eventId!,
        bodySha256: plan.bodySha256,
        transactions: plan.items,
        receipts,
        inserted,
        deadLettered: bad.length,
      });

      if (plan.action === 'hold') {
        if (plan.hints.length === 0) {
          await store.deadLetter(deadLetters());
          return allRefused();
        }
        const verifier = opts.verifier!;
        // Durable first: the hints, the dead letters and the event commit together, before anything is checked —
        // unless the provider's bucket would hold more than its cap: then nothing is stored and the answer is 429.
        const { held, duplicate } = await withTransaction(opts.db, async (c) => {
          const s = createWebhookStore(c);
          const signatures = plan.hints.map((h) => h.signature);
          const room = await s.hintCapacity(opts.cluster, bucket, known, signatures, maxPendingHints);
          if (room.pending + room.fresh > maxPendingHints) {
            metrics.countWebhook(bucket, 'over_capacity');
            webhookMetrics.countOverCapacity(bucket);
            throw new HttpError(
              429,
              WEBHOOK_CODES.HINTS_OVER_CAPACITY,
              `provider ${bucket} holds ${room.pending} signatures waiting for the chain; ${room.fresh} more would pass its cap of ${maxPendingHints}: retry after ${HINTS_RETRY_AFTER_S} s (nothing was stored)`,
            );
          }
          const held = await s.holdHints(opts.cluster, provider, eventId, plan.hints, verifier.maxAgeMs);
          await s.deadLetter(deadLetters());
          const duplicate = eventId !== null && !reused && !(await s.recordEvent(event(0, 0)));
          return { held, duplicate };
        });
        failpoint('webhook.after_hints_stored');
        const open = held.filter((h) => h.state === 'pending').map((h) => h.id);
        const sum = await verifier.check(open, AbortSignal.timeout(opts.inlineCheckMs ?? DEFAULT_INLINE_CHECK_MS));
        const pending = open.length - sum.credited - sum.dropped; // incl. hints another request is checking
        const credited = held.filter((h) => h.state === 'credited').length + sum.credited;
        const dropped = held.filter((h) => h.state === 'dropped').length + sum.dropped;
        metrics.countWebhook(
          bucket,
          duplicate ? 'duplicate' : pending > 0 ? 'pending' : bad.length > 0 ? 'partial' : 'applied',
        );
        log?.info(
          {
            provider,
            eventId,
            items: plan.items,
            signatures: plan.hints.length,
            credited,
            pending,
            dropped,
            inserted: sum.inserted,
            deadLettered: bad.length,
          },
          'webhook delivery held and checked against the chain',
        );
        return answer(pending > 0 ? 202 : 200, {
          duplicate,
          receipts: sum.receipts,
          inserted: sum.inserted,
          duplicates: sum.duplicates,
          deadLettered: bad.length,
          rejected: bad,
          credited,
          pending,
          dropped,
        });
      }

      // --trust-provider. Apply first, record the event last: a crash in between means a redelivery re-applies
      // (harmless, the ledger inserts each receipt once) instead of a recorded event whose receipts were never
      // applied.
      const { receipts, itemOf } = plan;
      let inserted = 0;
      let duplicates = 0;
      if (receipts.length > 0) {
        const applied = await opts.ledger.applyBatch({ cluster: opts.cluster, source: 'webhook', receipts });
        inserted = applied.inserted;
        duplicates = applied.duplicates;
        for (const r of applied.rejected ?? []) {
          const index = itemOf[r.index];
          if (!bad.some((b) => b.index === index))
            bad.push({ index, code: WEBHOOK_CODES.RECEIPT_REJECTED, message: `${r.code}: ${r.message}` });
        }
      }
      failpoint('webhook.after_apply');
      await store.deadLetter(deadLetters());

      if (plan.items > 0 && bad.length === plan.items) return allRefused();
      const duplicate = eventId !== null && !reused && !(await store.recordEvent(event(receipts.length, inserted)));
      metrics.countWebhook(bucket, duplicate ? 'duplicate' : bad.length > 0 ? 'partial' : 'applied');
      log?.info(
        {
          provider,
          eventId,
          items: plan.items,
          receipts: receipts.length,
          inserted,
          duplicates,
          deadLettered: bad.length,
        },
        'webhook delivery applied (trusted, not verified)',
      );
      return answer(200, {
        duplicate,
        receipts: receipts.length,
        inserted,
        duplicates,
        deadLettered: bad.length,
        rejected: bad,
      });
    },
  );
  return app;
}
