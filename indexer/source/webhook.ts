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
//
// This file composes the app from its units: the gate (webhook-gate.ts: URL and headers, before the body), the
// route (webhook-route.ts: plan, duplicates, whole-body dead letters), the two intakes (webhook-hold.ts: hints held
// and checked; webhook-trusted.ts: --trust-provider), the answers (webhook-reply.ts, webhook-errors.ts) and the
// provider labels (webhook-providers.ts).
import Fastify, { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { OncepayError } from '../../common/errors';
import { SOURCE_CODES } from '../../common/errors/codes';
import { throttledWarn } from '../../common/throttled-log';
import { healthRoutes } from '../../db/health-http';
import { decodeTransaction } from '../decode';
import type { Receipt } from '../decode/receipt';
import { LedgerPort, NO_METRICS, SourceMetrics } from './ports';
import { DEFAULT_TOLERANCE_S } from './webhook-auth';
import { installWebhookErrors } from './webhook-errors';
import { DEFAULT_INLINE_CHECK_MS } from './webhook-hold';
import { NO_WEBHOOK_METRICS, WebhookMetrics } from './webhook-metrics';
import { providerLabeler } from './webhook-providers';
import { registerDeliveryRoute, RouteDeps } from './webhook-route';
import { createWebhookStore } from './webhook-store';
import { DEFAULT_MAX_PENDING_HINTS, type ChainVerifier } from './webhook-verifier';

export { HINTS_RETRY_AFTER_S } from './webhook-errors';
export { DEFAULT_INLINE_CHECK_MS } from './webhook-hold';
export { PROVIDER_NAME, UNKNOWN_PROVIDER } from './webhook-providers';
export type { WebhookReply } from './webhook-reply';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

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

export function buildWebhookApp(opts: WebhookAppOptions): FastifyInstance {
  if (!opts.trustProvider && !opts.verifier) {
    throw new OncepayError(
      SOURCE_CODES.INVALID_OPTION,
      'the webhook needs a chain verifier (an RPC endpoint), or trustProvider to opt out explicitly',
    );
  }
  const log = opts.log;
  if (opts.trustProvider)
    log?.warn(
      'webhook deliveries are NOT verified against the chain (--trust-provider): whoever holds the secret can credit anything',
    );
  if (opts.legacySignature)
    log?.warn(
      'the deprecated untimestamped webhook signature and bare secrets are accepted (--legacy-signature): captured deliveries can be replayed',
    );

  const app = Fastify({ logger: false, bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT });
  // The body is kept as raw bytes: the HMAC covers them exactly (webhook-plan.ts parses them after authenticating).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const refusalLog = throttledWarn(log);
  installWebhookErrors(app, { log, refusalLog });
  void app.register(healthRoutes, { db: opts.db });
  if (opts.registry) {
    const registry = opts.registry;
    app.get('/metrics', { schema: { response: { 200: { type: 'string' } } } }, async (_req, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  }
  registerDeliveryRoute(app, routeDeps(opts, refusalLog));
  return app;
}

/** The options, resolved to what the route and its units take. */
function routeDeps(opts: WebhookAppOptions, refusalLog: ReturnType<typeof throttledWarn>): RouteDeps {
  const metrics = opts.metrics ?? NO_METRICS;
  const webhookMetrics = opts.webhookMetrics ?? NO_WEBHOOK_METRICS;
  const configured = [...(opts.providers ?? [])];
  const auth = {
    secrets: typeof opts.secret === 'string' ? [opts.secret] : [...opts.secret],
    toleranceS: opts.signatureToleranceS ?? DEFAULT_TOLERANCE_S,
    legacy: opts.legacySignature,
    requireSignature: opts.requireSignature,
  };
  const trustProvider = opts.trustProvider ?? false;
  const { db, cluster, log } = opts;
  return {
    gate: { auth, label: providerLabeler(configured), metrics, webhookMetrics, refusalLog },
    policy: {
      auth,
      cluster,
      trustProvider,
      decode: opts.decode ?? ((item: unknown, cluster: string) => decodeTransaction(item, { cluster })),
    },
    nowS: opts.nowS ?? (() => Math.floor(Date.now() / 1000)),
    store: createWebhookStore(db),
    hold: trustProvider
      ? null
      : {
          db,
          cluster,
          verifier: opts.verifier!,
          configured,
          maxPendingHints: opts.maxPendingHints ?? DEFAULT_MAX_PENDING_HINTS,
          inlineCheckMs: opts.inlineCheckMs ?? DEFAULT_INLINE_CHECK_MS,
          metrics,
          webhookMetrics,
          log,
        },
    trusted: { db, ledger: opts.ledger, cluster, metrics, log },
    metrics,
    webhookMetrics,
    log,
  };
}
