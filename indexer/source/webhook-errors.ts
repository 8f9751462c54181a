// How the webhook app answers an error: one HTTP error shape (common/errors/http.ts, { code, message }) under an
// ONCEPAY__WEBHOOK__* code. A database outage is 503 (db/health-http.ts); a server fault is logged as an error; a
// refusal anyone can provoke is logged once per kind per interval (throttled), never once per request.
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { WEBHOOK_CODES } from '../../common/errors/codes';
import { fastifyRefusal, HttpError, sendHttpError } from '../../common/errors/http';
import type { ThrottledWarn } from '../../common/throttled-log';
import { replyIfDatabaseUnavailable } from '../../db/health-http';

/** What a provider is told to wait after a 429 (its bucket of pending hints is full). */
export const HINTS_RETRY_AFTER_S = 30;

/**
 * Any error a request ended with → the webhook's answer: its own HttpErrors as they are, fastify's refusals and
 * foreign errors under an ONCEPAY__WEBHOOK__* code; a 5xx never carries the error's own message.
 */
export function toWebhookHttpError(err: FastifyError): HttpError {
  if (err instanceof HttpError) return err;
  const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
  const refusal = fastifyRefusal(err);
  let code = (err as { code?: string }).code ?? WEBHOOK_CODES.INTERNAL;
  if (refusal === 'body_too_large') code = WEBHOOK_CODES.BODY_TOO_LARGE;
  else if (refusal === 'media_type_unsupported') code = WEBHOOK_CODES.UNSUPPORTED_MEDIA_TYPE;
  else if (refusal === 'schema_invalid') code = WEBHOOK_CODES.INVALID_REQUEST;
  else if (!code.startsWith('ONCEPAY__')) code = status >= 500 ? WEBHOOK_CODES.INTERNAL : WEBHOOK_CODES.INVALID_REQUEST;
  return new HttpError(status, code, status >= 500 ? 'internal error' : err.message);
}

/** The app's error and not-found handlers. */
export function installWebhookErrors(
  app: FastifyInstance,
  deps: { log: Logger | undefined; refusalLog: ThrottledWarn },
): void {
  const { log, refusalLog } = deps;
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (replyIfDatabaseUnavailable(err, reply))
      return void log?.warn(
        { code: 'DATABASE_UNAVAILABLE', url: req.url, err: err.message },
        'webhook delivery refused: database unavailable',
      );
    const e = toWebhookHttpError(err);
    if (e.status >= 500) log?.error({ err: err.message, url: req.url }, 'webhook request failed');
    // A refusal anyone can provoke: one line per kind per interval, never one per request.
    else refusalLog(e.code, { code: e.code, status: e.status, url: req.url.slice(0, 200) }, err.message);
    if (e.status === 429) reply.header('retry-after', String(HINTS_RETRY_AFTER_S));
    void sendHttpError(reply, e);
  });
  app.setNotFoundHandler((req, reply) => {
    void sendHttpError(reply, new HttpError(404, WEBHOOK_CODES.NOT_FOUND, `no route ${req.method} ${req.url}`));
  });
}
