// The one error answer of every oncepay HTTP server — the merchant API (app/api) and the webhook receiver
// (indexer/source/webhook.ts): a status, and a JSON body { code, message } with nothing else, sent by
// sendHttpError. Each server keeps its own codes; how fastify's own refusals (body too large, wrong media type,
// schema) are told apart is decided once here.
import type { FastifyError, FastifyReply } from 'fastify';

export interface HttpErrorBody {
  code: string;
  message: string;
}

export function httpErrorBody(code: string, message: string): HttpErrorBody {
  return { code, message };
}

export const httpErrorBodySchema = {
  type: 'object',
  required: ['code', 'message'],
  additionalProperties: false,
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
  },
} as const;

/**
 * An error a server answers with: `status` and the body { code, message }. Not an OncepayError, on purpose: `code`
 * is the wire vocabulary of the server that answers (API_ERRORS in app/api/errors.ts, WEBHOOK_CODES), and the
 * message goes out as it is, unprefixed. The code paths that branch on isOncepayError (webhook-plan.ts's item
 * refusals, toApiError) must not take a finished answer for an input error to translate.
 */
export class HttpError<C extends string = string> extends Error {
  readonly code: C;
  readonly status: number;
  constructor(status: number, code: C, message: string) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.status = status;
  }
  body(): HttpErrorBody & { code: C } {
    return { code: this.code, message: this.message };
  }
}

/** Send `e` as the one error answer: its status, JSON { code, message }. */
export function sendHttpError(reply: FastifyReply, e: HttpError): FastifyReply {
  return reply.code(e.status).send(e.body());
}

/** What fastify itself refused before a route ran, or null when the error is not one of fastify's refusals. */
export type FastifyRefusal = 'body_too_large' | 'media_type_unsupported' | 'schema_invalid' | 'body_malformed';

export function fastifyRefusal(e: FastifyError): FastifyRefusal | null {
  if (e.validation) return 'schema_invalid';
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'media_type_unsupported';
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'body_too_large';
  if (e.code?.startsWith('FST_ERR_CTP_') || e instanceof SyntaxError) return 'body_malformed';
  return null;
}
