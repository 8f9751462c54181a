// The one shape of a create under the merchant's Idempotency-Key (POST /v1/payouts, POST /v1/invoices): the header
// is required and checked before schema validation; the request is validated and reduced to its canonical form
// before the key is claimed (nothing is claimed for a request that can never succeed); the key, the effect and the
// stored answer share one connection and one transaction (idempotency.ts); and every outcome is answered the same
// way — the effect's answer, the stored answer again with `Idempotent-Replayed: true`, or 409 for a key used with
// another body or still in flight.
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Pool, PoolClient } from 'pg';
import { MerchantRow } from '../merchant/store';
import { authenticatedMerchant } from './api-key-auth';
import { ApiError } from './errors';
import { canonicalRequestHash, IdempotentOutcome, isIdempotencyKey, withIdempotencyKey } from './idempotency';

/** What a create answers: a status and its JSON body, stored with the key and replayed as it is. */
export interface Answer {
  status: number;
  body: unknown;
}

/** An error as a stored answer (e.g. "this id already exists under another key": replayed as the same 409). */
export function errorAnswer(e: ApiError): Answer {
  return { status: e.status, body: e.body() };
}

/**
 * How an outcome of withIdempotencyKey is answered: the effect's or the stored answer (`replayed` for the stored
 * one), or the ApiError thrown for a key used with another body or still held by a request in flight.
 */
export function answerOf(outcome: IdempotentOutcome): Answer & { replayed: boolean } {
  switch (outcome.kind) {
    case 'conflict':
      throw new ApiError('IDEMPOTENCY_CONFLICT');
    case 'in_progress':
      throw new ApiError('IDEMPOTENCY_IN_PROGRESS');
    case 'replay':
      return { status: outcome.status, body: outcome.body, replayed: true };
    case 'done':
      return { status: outcome.status, body: outcome.body, replayed: false };
  }
}

/** A validated request: what its key is bound to, and the effect to run once under it. */
export interface PreparedCreate {
  /** The request's meaning as strings (absent optional fields as ''): its hash binds the key. */
  canonical: Record<string, string>;
  /** Runs in the key's transaction, on its connection; its answer is stored with the key. */
  create(c: PoolClient): Promise<Answer>;
}

/** The error responses a create route documents (schemas.ts `errorResponses` or a route's refinement of it). */
export type CreateErrorResponses = Record<400 | 401 | 409 | 413 | 415 | 500 | 503, object>;

export interface IdempotentCreateRoute<Body> {
  path: string;
  summary: string;
  description: string;
  bodySchema: object;
  /** The 201 answer's schema. */
  createdSchema: object;
  errors: CreateErrorResponses;
  db: Pool;
  /** An in-flight claim made before migration 0110 (no holder session recorded) may be taken over after this. */
  idempotencyStaleMs: number;
  /** Validates and prepares the request; runs before the key is claimed, so it may read (not write) outside it. */
  prepare(merchant: MerchantRow, body: Body): Promise<PreparedCreate>;
}

const idempotencyKeyHeaderSchema = {
  type: 'object',
  required: ['idempotency-key'],
  properties: {
    'idempotency-key': {
      type: 'string',
      description: 'Client-chosen key, 1–255 visible ASCII characters, kept ≥ 24 h.',
    },
  },
} as const;

/** Before schema validation, so a missing key is reported as such even when the body is also wrong. */
async function requireIdempotencyKey(req: FastifyRequest): Promise<void> {
  const key = req.headers['idempotency-key'];
  if (key === undefined) throw new ApiError('IDEMPOTENCY_KEY_MISSING');
  if (!isIdempotencyKey(key)) throw new ApiError('IDEMPOTENCY_KEY_MALFORMED');
}

/** Register `POST route.path` as an idempotent create. */
export function idempotentCreateRoute<Body>(app: FastifyInstance, route: IdempotentCreateRoute<Body>): void {
  const { errors } = route;
  app.post<{ Body: Body; Headers: { 'idempotency-key'?: string } }>(
    route.path,
    {
      schema: {
        summary: route.summary,
        description: route.description,
        security: [{ bearer: [] }],
        headers: idempotencyKeyHeaderSchema,
        body: route.bodySchema,
        response: {
          201: route.createdSchema,
          400: errors[400],
          401: errors[401],
          409: errors[409],
          413: errors[413],
          415: errors[415],
          500: errors[500],
          503: errors[503],
        },
      },
      preValidation: requireIdempotencyKey,
    },
    async (req, reply): Promise<FastifyReply> => {
      const merchant = authenticatedMerchant(req);
      const key = req.headers['idempotency-key'] as string;
      // Fastify validated the body against route.bodySchema, which Body describes.
      const prepared = await route.prepare(merchant, req.body as Body);
      const hash = canonicalRequestHash('POST', route.path, prepared.canonical);
      const answer = answerOf(
        await withIdempotencyKey(route.db, merchant.id, key, hash, prepared.create, route.idempotencyStaleMs),
      );
      if (answer.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(answer.status).send(answer.body);
    },
  );
}
