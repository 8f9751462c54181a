// POST /v1/payouts and GET /v1/payouts/:id. Registered only through registerAuthenticatedRoutes (api-key-auth.ts):
// the merchant is on the request.
import { FastifyInstance } from 'fastify';
import { Pool } from 'pg';
import { preparePayout, sameTerms } from '../payout/create-payout';
import { getPayoutOfMerchantById, insertPayout, listAttempts } from '../payout/store';
import { payoutView } from '../payout/view';
import { authenticatedMerchant } from './api-key-auth';
import { ApiError } from './errors';
import { errorAnswer, idempotentCreateRoute } from './idempotent-create';
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

  idempotentCreateRoute<CreateBody>(app, {
    path: '/v1/payouts',
    summary: 'Create a payout (idempotent)',
    description:
      'Stores the payout (nothing executes inside the request: the payout worker pool claims it); execution on chain happens once per payoutId (op account PDA). Repeat the same request with the same Idempotency-Key to get the original response.',
    bodySchema: createPayoutBodySchema,
    createdSchema: payoutSchema,
    errors: errorResponses,
    db,
    idempotencyStaleMs: opts.idempotencyStaleMs,
    prepare: async (merchant, body) => {
      const prepared = preparePayout(merchant, body);
      return {
        canonical: {
          payoutId: prepared.merchantPayoutId,
          recipient: prepared.recipientToken,
          mint: prepared.mint,
          amount: prepared.amount.toString(),
        },
        create: async (c) => {
          const r = await insertPayout(c, prepared);
          if (r.created) return { status: 201, body: payoutView(r.row, []) };
          // Another key already created this business operation: never a second payout.
          return errorAnswer(
            new ApiError(
              'PAYOUT_ID_EXISTS',
              `payoutId ${JSON.stringify(prepared.merchantPayoutId)} already exists as payout ${r.row.id}${sameTerms(r.row, prepared) ? ' (same terms)' : ' with other terms'}`,
            ),
          );
        },
      };
    },
  });

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
