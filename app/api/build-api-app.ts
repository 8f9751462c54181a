// The merchant API as a fastify app, built without listening (tests use app.inject; `oncepay payout serve`
// listens). The OpenAPI document at /openapi.json is generated from the route schemas.
import Fastify, { FastifyError, FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { Pool } from 'pg';
import { register } from 'prom-client';
import { logger } from '../../common/log';
import { healthRoutes, replyIfDatabaseUnavailable } from '../../db/health-http';
import { registerAuthenticatedRoutes } from './api-key-auth';
import { fastifyRefusal, sendHttpError } from '../../common/errors/http';
import { ApiError, errorBodySchema, toApiError } from './errors';
import { payoutRoutes } from './payout-routes';
import { ConsoleOptions, consoleApp } from '../console/console-app';
import { invoiceRoutes, InvoiceRoutesOptions } from './invoice-routes';
import { checkoutRoutes, CheckoutRoutesOptions } from '../checkout/checkout-routes';

export interface ApiAppOptions {
  db: Pool;
  idempotencyStaleMs?: number;
  bodyLimit?: number;
  /** The operator console at /console/ (app/console); absent: not served. */
  console?: Omit<ConsoleOptions, 'db'>;
  /** Invoices: how a mint's decimals are read from the chain, and the public URL of checkout links. */
  invoices?: Pick<InvoiceRoutesOptions, 'readMintDecimals' | 'publicUrl'>;
  /** The public checkout page's bounds (event streams, heartbeat). */
  checkout?: Omit<CheckoutRoutesOptions, 'db'>;
}

function fromFastifyError(e: FastifyError): ApiError {
  if (e instanceof ApiError) return e;
  const refusal = fastifyRefusal(e);
  if (refusal === 'schema_invalid') {
    const v = e.validation?.[0];
    const field = v?.instancePath?.replace(/^\//, '');
    if (field === 'amount') return new ApiError('AMOUNT_MALFORMED');
    if (field === 'payoutId') return new ApiError('PAYOUT_ID_MALFORMED');
    if (field === 'invoiceId') return new ApiError('INVOICE_ID_MALFORMED');
    if (e.validationContext === 'querystring')
      return new ApiError('FILTER_INVALID', `query${v?.instancePath ?? ''} ${v?.message}`);
    return new ApiError(
      'BODY_INVALID',
      `${e.validationContext ?? 'request'}${v?.instancePath ?? ''} ${v?.message ?? 'is invalid'}`,
    );
  }
  if (refusal === 'media_type_unsupported') return new ApiError('CONTENT_TYPE_UNSUPPORTED');
  if (refusal === 'body_too_large') return new ApiError('BODY_TOO_LARGE');
  if (refusal === 'body_malformed') return new ApiError('BODY_MALFORMED');
  return toApiError(e);
}

export async function buildApiApp(opts: ApiAppOptions): Promise<FastifyInstance> {
  const log = logger('api');
  const app = Fastify({
    logger: false,
    bodyLimit: opts.bodyLimit ?? 16 * 1024,
    // No coercion (a JSON number is not an amount string) and no silent removal of unknown fields.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
  });
  app.addSchema(errorBodySchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'oncepay merchant API',
        version: '1.0.0',
        description: 'Idempotent payouts executed exactly once on Solana.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    // Shared schemas keep their $id as the component name (ApiError, not def-0).
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (replyIfDatabaseUnavailable(err, reply))
      return void log.warn(
        { code: 'DATABASE_UNAVAILABLE', url: req.url, err: err.message },
        'request refused: database unavailable',
      );
    const e = fromFastifyError(err);
    if (e.status >= 500) log.error({ err: err.message, stack: err.stack, url: req.url }, 'request failed');
    else log.warn({ code: e.code, url: req.url, detail: e.message }, 'request refused');
    void sendHttpError(reply, e);
  });
  app.setNotFoundHandler((_req, reply) => {
    void sendHttpError(reply, new ApiError('ROUTE_NOT_FOUND'));
  });

  // JSON only: fastify's default text/plain parser would hand a string to the routes; without it a non-JSON body
  // is FST_ERR_CTP_INVALID_MEDIA_TYPE → 415 CONTENT_TYPE_UNSUPPORTED, as the OpenAPI document says.
  app.removeContentTypeParser('text/plain');

  // Everything under /v1 lives in the authenticated context; public routes below stay outside it.
  await registerAuthenticatedRoutes(app, opts.db, payoutRoutes, {
    db: opts.db,
    idempotencyStaleMs: opts.idempotencyStaleMs ?? 60_000,
  });
  await registerAuthenticatedRoutes(app, opts.db, invoiceRoutes, {
    db: opts.db,
    idempotencyStaleMs: opts.idempotencyStaleMs ?? 60_000,
    ...opts.invoices,
  });

  // The operator console: its own encapsulated context (sessions, CSRF, CSP, HTML errors), beside the API.
  if (opts.console) await app.register(consoleApp, { ...opts.console, db: opts.db, prefix: '/console' });

  await app.register(checkoutRoutes, { db: opts.db, ...opts.checkout }); // public: the payer's page
  await app.register(healthRoutes, { db: opts.db });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    void reply.header('content-type', register.contentType);
    return register.metrics();
  });
  await app.ready();
  return app;
}
