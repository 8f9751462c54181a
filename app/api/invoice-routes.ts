// POST /v1/invoices, GET /v1/invoices/:id and GET /v1/invoices. Registered only through registerAuthenticatedRoutes
// (api-key-auth.ts): the merchant is on the request, and every read has it in its key.
import { FastifyInstance } from 'fastify';
import { Pool } from 'pg';
import { decodeCursor, encodeCursor } from '../invoice/list-cursor';
import { prepareInvoice, sameInvoiceTerms } from '../invoice/prepare';
import {
  getInvoice,
  insertInvoice,
  invoiceDetail,
  listInvoices,
  mintDecimals,
  ReadMintDecimals,
} from '../invoice/store';
import { invoiceView } from '../invoice/view';
import { authenticatedMerchant } from './api-key-auth';
import { ApiError } from './errors';
import { errorAnswer, idempotentCreateRoute } from './idempotent-create';
import {
  createInvoiceBodySchema,
  invoiceErrorResponses as errors,
  invoicePageSchema,
  invoiceSchema,
  listInvoicesQuerySchema,
} from './invoice-schemas';

export interface InvoiceRoutesOptions {
  db: Pool;
  idempotencyStaleMs: number;
  /** Reads a mint's decimals from the chain (once per mint); without it only SOL and stored mints are accepted. */
  readMintDecimals?: ReadMintDecimals;
  /** Where the API is reached from outside: the checkout link is absolute with it, a path without. */
  publicUrl?: string;
}

interface CreateBody {
  invoiceId: string;
  amount: string;
  mint: string;
  recipient?: string;
  label?: string;
  message?: string;
  memo?: string;
  expiresAt?: string;
}

interface ListQuery {
  status?: 'open' | 'paid' | 'expired';
  createdFrom?: string;
  createdTo?: string;
  limit?: string;
  cursor?: string;
}

function time(x: string | undefined, field: string): Date | undefined {
  if (x === undefined) return undefined;
  const t = /^\d{4}-\d{2}-\d{2}/.test(x) ? new Date(x) : null;
  if (!t || Number.isNaN(t.getTime())) throw new ApiError('FILTER_INVALID', `${field} must be an ISO 8601 time`);
  return t;
}

/** POST /v1/invoices: create an invoice under the merchant's Idempotency-Key. */
function createInvoiceRoute(app: FastifyInstance, opts: InvoiceRoutesOptions): void {
  const { db } = opts;
  idempotentCreateRoute<CreateBody>(app, {
    path: '/v1/invoices',
    summary: 'Create an invoice (idempotent)',
    description:
      'Stores the invoice with a reference key oncepay generates; answers its Solana Pay URL and checkout link. The ledger credits it when a payment carrying the reference reaches the recipient at finality. Repeat the same request with the same Idempotency-Key to get the original response.',
    bodySchema: createInvoiceBodySchema,
    createdSchema: invoiceSchema,
    errors,
    db,
    idempotencyStaleMs: opts.idempotencyStaleMs,
    prepare: async (merchant, b) => {
      const terms = prepareInvoice(merchant, b, new Date());
      // The mint's decimals before the key is claimed: a chain read never runs inside the request's transaction.
      const decimals = await mintDecimals(db, terms.mint, opts.readMintDecimals);
      return {
        canonical: {
          invoiceId: terms.invoiceId,
          amount: terms.amount.toString(),
          mint: terms.mint,
          recipient: b.recipient ?? '',
          label: b.label ?? '',
          message: b.message ?? '',
          memo: b.memo ?? '',
          expiresAt: terms.expiresAt?.toISOString() ?? '',
        },
        create: async (c) => {
          const r = await insertInvoice(c, terms, decimals);
          if (r.created)
            return { status: 201, body: invoiceView(r.row, opts.publicUrl, await invoiceDetail(c, r.row)) };
          // Another key already created this invoice: never a second one (and never a second reference key).
          return errorAnswer(
            new ApiError(
              'INVOICE_ID_EXISTS',
              `invoiceId ${JSON.stringify(terms.invoiceId)} already exists${sameInvoiceTerms(r.row, terms) ? ' (same terms)' : ' with other terms'}`,
            ),
          );
        },
      };
    },
  });
}

export async function invoiceRoutes(app: FastifyInstance, opts: InvoiceRoutesOptions): Promise<void> {
  createInvoiceRoute(app, opts);
  const { db } = opts;
  app.get<{ Params: { id: string } }>(
    '/v1/invoices/:id',
    {
      schema: {
        summary: 'An invoice, what the ledger credited to it, its exceptions and its fulfilment',
        security: [{ bearer: [] }],
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', description: "The merchant's invoiceId" } },
        },
        response: { 200: invoiceSchema, 401: errors[401], 404: errors[404], 500: errors[500], 503: errors[503] },
      },
    },
    async (req) => {
      // Another merchant's invoice is "not found", not "forbidden": its row is never read for this request.
      const inv = await getInvoice(db, authenticatedMerchant(req).id, req.params.id);
      if (!inv) throw new ApiError('INVOICE_NOT_FOUND');
      return invoiceView(inv, opts.publicUrl, await invoiceDetail(db, inv));
    },
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/invoices',
    {
      schema: {
        summary: "The merchant's invoices, newest first (cursor pagination)",
        security: [{ bearer: [] }],
        querystring: listInvoicesQuerySchema,
        response: { 200: invoicePageSchema, 400: errors[400], 401: errors[401], 500: errors[500], 503: errors[503] },
      },
    },
    async (req) => {
      const q = req.query;
      const limit = q.limit === undefined ? 20 : Number(q.limit);
      if (!(limit >= 1 && limit <= 100)) throw new ApiError('FILTER_INVALID', 'limit must be 1–100');
      const before = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      if (before === null) throw new ApiError('CURSOR_MALFORMED');
      const page = await listInvoices(db, {
        merchantId: authenticatedMerchant(req).id,
        status: q.status,
        createdFrom: time(q.createdFrom, 'createdFrom'),
        createdTo: time(q.createdTo, 'createdTo'),
        before,
        limit,
      });
      const last = page.rows[page.rows.length - 1];
      return {
        data: page.rows.map((r) => invoiceView(r, opts.publicUrl)),
        nextCursor: page.more && last ? encodeCursor(last.id) : null,
      };
    },
  );
}
