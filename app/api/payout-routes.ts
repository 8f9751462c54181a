// POST /v1/payouts and GET /v1/payouts/:id. Registered only through registerAuthenticatedRoutes (api-key-auth.ts):
// the merchant is on the request.
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Pool } from 'pg';
import { logger } from '../../common/log';
import { preparePayout, sameTerms } from '../payout/create-payout';
import { PayoutRow, getPayout, insertPayout, listAttempts } from '../payout/queries';
import { payoutView } from '../payout/view';
import { authenticatedMerchant } from './api-key-auth';
import { ApiError, toApiError } from './errors';
import { canonicalRequestHash, claimKey, completeKey, isIdempotencyKey, releaseKey } from './idempotency';
import { createPayoutBodySchema, errorResponses, payoutSchema } from './schemas';

export interface PayoutRoutesOptions {
  db: Pool;
  /** An in-flight claim older than this may be taken over by a retry (its process died). */
  idempotencyStaleMs: number;
  /** Called after a payout row is committed (e.g. to start executing it). Errors are logged, not returned. */
  onPayoutCreated?: (row: PayoutRow) => void | Promise<void>;
}

interface CreateBody {
  payoutId: string;
  recipient: string;
  mint: string;
  amount: string;
}

export async function payoutRoutes(app: FastifyInstance, opts: PayoutRoutesOptions): Promise<void> {
  const { db } = opts;
  const log = logger('api');

  app.post<{ Body: CreateBody; Headers: { 'idempotency-key'?: string } }>(
    '/v1/payouts',
    {
      schema: {
        summary: 'Create a payout (idempotent)',
        description:
          'Stores the payout; execution on chain happens once per payoutId (op account PDA). Repeat the same request with the same Idempotency-Key to get the original response.',
        security: [{ bearer: [] }],
        headers: {
          type: 'object',
          required: ['idempotency-key'],
          properties: { 'idempotency-key': { type: 'string', description: 'Client-chosen key, 1–255 visible ASCII characters, kept ≥ 24 h.' } },
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
      const canonical = { payoutId: prepared.payoutId, recipient: prepared.recipient, mint: prepared.mint, amount: prepared.amount.toString() };
      const hash = canonicalRequestHash('POST', '/v1/payouts', canonical);

      const claim = await claimKey(db, merchant.id, key, hash, opts.idempotencyStaleMs);
      if (claim.kind === 'conflict') throw new ApiError('IDEMPOTENCY_CONFLICT');
      if (claim.kind === 'in_progress') throw new ApiError('IDEMPOTENCY_IN_PROGRESS');
      if (claim.kind === 'replay') {
        reply.header('idempotent-replayed', 'true');
        return reply.code(claim.status).send(claim.body);
      }

      let status: number;
      let body: unknown;
      let created: PayoutRow | undefined;
      const c = await db.connect();
      try {
        await c.query('BEGIN');
        const r = await insertPayout(c, prepared);
        if (r.created) {
          status = 201;
          body = payoutView(r.row, []);
          created = r.row;
        } else {
          // Another key already created this business operation: never a second payout.
          const e = new ApiError(
            'PAYOUT_ID_EXISTS',
            `payoutId ${JSON.stringify(prepared.payoutId)} already exists as payout ${r.row.id}${sameTerms(r.row, prepared) ? ' (same terms)' : ' with other terms'}`,
          );
          status = e.status;
          body = e.body();
        }
        await completeKey(c, merchant.id, key, status, body);
        await c.query('COMMIT');
      } catch (e) {
        await c.query('ROLLBACK').catch(() => undefined);
        await releaseKey(db, merchant.id, key).catch(() => undefined);
        throw e;
      } finally {
        c.release();
      }
      if (created && opts.onPayoutCreated) {
        Promise.resolve()
          .then(() => opts.onPayoutCreated!(created!))
          .catch((e) => log.error({ err: (e as Error).message, payout: created!.id }, 'onPayoutCreated failed'));
      }
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
        response: { 200: payoutSchema, 401: errorResponses[401], 404: errorResponses[404], 500: errorResponses[500] },
      },
    },
    async (req) => {
      const p = await getPayout(db, req.params.id);
      // Another merchant's payout is "not found", not "forbidden": ids leak nothing across merchants.
      if (!p || p.merchantId !== authenticatedMerchant(req).id) throw new ApiError('PAYOUT_NOT_FOUND');
      return payoutView(p, await listAttempts(db, p.id));
    },
  );
}

export { toApiError };
