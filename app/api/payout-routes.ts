// POST /v1/payouts and GET /v1/payouts/:id. Registered only through registerAuthenticatedRoutes (api-key-auth.ts):
// the merchant is on the request.
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Pool } from 'pg';
import { preparePayout, sameTerms } from '../payout/create-payout';
import { getPayoutOfMerchantById, insertPayout, listAttempts } from '../payout/store';
import { payoutView } from '../payout/view';
import { authenticatedMerchant } from './api-key-auth';
import { ApiError } from './errors';
import { canonicalRequestHash, isIdempotencyKey, withIdempotencyKey } from './idempotency';
import { createPayoutBodySchema, errorResponses, payoutSchema } from './schemas';

export interface PayoutRoutesOptions {
  db: Pool;
  /** An in-flight claim made before migration 0110 (no holder session recorded) may be taken over after this. */
  idempotencyStaleMs: number;
}

interface CreateBody {
  payoutId: string;
  recipient: string;
  mint: string;
  amount: string;
}

export async function payoutRoutes(app: FastifyInstance, opts: PayoutRoutesOptions): Promise<void> {
  const { db } = opts;

  app.post<{ Body: CreateBody; Headers: { 'idempotency-key'?: string } }>(
    '/v1/payouts',
    {
      schema: {
        summary: 'Create a payout (idempotent)',
        description:
          'Stores the payout (nothing executes inside the request: the payout worker pool claims it); execution on chain happens once per payoutId (op account PDA). Repeat the same request with the same Idempotency-Key to get the original response.',
        security: [{ bearer: [] }],
        headers: {
          type: 'object',
          required: ['idempotency-key'],
          properties: {
            'idempotency-key': {
              type: 'string',
              description: 'Client-chosen key, 1–255 visible ASCII characters, kept ≥ 24 h.',
            },
          },
        },
        body: createPayoutBodySchema,
        response: {
          201: payoutSchema,
          400: errorResponses[400],
          401: errorResponses[401],
          409: errorResponses[409],
          413: errorResponses[413],
          415: errorResponses[415],
          500: errorResponses[500],
          503: errorResponses[503],
        },
      },
      // Before schema validation, so a missing key is reported as such even when the body is also wrong.
      preValidation: async (req: FastifyRequest) => {
        const key = req.headers['idempotency-key'];
        if (key === undefined) throw new ApiError('IDEMPOTENCY_KEY_MISSING');
        if (!isIdempotencyKey(key)) throw new ApiError('IDEMPOTENCY_KEY_MALFORMED');
      },
    },
    async (req, reply) => {
      const merchant = authenticatedMerchant(req);
      const key = req.headers['idempotency-key'] as string;
      // Validation first (nothing is claimed for a request that can never succeed).
      const prepared = preparePayout(merchant, req.body);
      const canonical = {
        payoutId: prepared.merchantPayoutId,
        recipient: prepared.recipientToken,
        mint: prepared.mint,
        amount: prepared.amount.toString(),
      };
      const hash = canonicalRequestHash('POST', '/v1/payouts', canonical);

      // Claim, insert and store the answer on one connection (idempotency.ts): a retry sees this request in
      // flight exactly as long as its database session lives.
      const outcome = await withIdempotencyKey(
        db,
        merchant.id,
        key,
        hash,
        async (c) => {
          const r = await insertPayout(c, prepared);
          if (r.created) {
            return { status: 201, body: payoutView(r.row, []) };
          }
          // Another key already created this business operation: never a second payout.
          const e = new ApiError(
            'PAYOUT_ID_EXISTS',
            `payoutId ${JSON.stringify(prepared.merchantPayoutId)} already exists as payout ${r.row.id}${sameTerms(r.row, prepared) ? ' (same terms)' : ' with other terms'}`,
          );
          return { status: e.status, body: e.body() };
        },
        opts.idempotencyStaleMs,
      );
      if (outcome.kind === 'conflict') throw new ApiError('IDEMPOTENCY_CONFLICT');
      if (outcome.kind === 'in_progress') throw new ApiError('IDEMPOTENCY_IN_PROGRESS');
      if (outcome.kind === 'replay') {
        reply.header('idempotent-replayed', 'true');
        return reply.code(outcome.status).send(outcome.body);
      }
      const { status, body } = outcome;
      return reply.code(status).send(body);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/payouts/:id',
    {
      schema: {
        summary: 'A payout, its attempts and its on-chain proof',
        security: [{ bearer: [] }],
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        response: {
          200: payoutSchema,
          401: errorResponses[401],
          404: errorResponses[404],
          500: errorResponses[500],
          503: errorResponses[503],
        },
      },
    },
    async (req) => {
      // Read with the merchant in the key: another merchant's payout is "not found", not "forbidden" (ids leak
      // nothing across merchants), and its row is never read for this request.
      const p = await getPayoutOfMerchantById(db, authenticatedMerchant(req).id, req.params.id);
      if (!p) throw new ApiError('PAYOUT_NOT_FOUND');
      return payoutView(p, await listAttempts(db, p.id));
    },
  );
}
