// Every error the merchant API answers with: one table of stable code → HTTP status + default message.
// Bodies are always { code, message } (common/errors/http.ts: the webhook receiver answers in the same shape).
// Codes are never removed, renamed or reused.
import { AMOUNT_CODES, INVOICE_CODES, isOncepayError, OncepayErrorCode, PAYOUT_CODES } from '../../common/errors';
import { HttpError, HttpErrorBody, httpErrorBodySchema } from '../../common/errors/http';
import { DATABASE_UNAVAILABLE_MESSAGE } from '../../db/unavailable';

export const API_ERRORS = {
  UNAUTHORIZED: { status: 401, message: 'missing or unknown API key (Authorization: Bearer <key>)' },
  IDEMPOTENCY_KEY_MISSING: { status: 400, message: 'the Idempotency-Key header is required' },
  IDEMPOTENCY_KEY_MALFORMED: { status: 400, message: 'Idempotency-Key must be 1–255 visible ASCII characters' },
  IDEMPOTENCY_CONFLICT: { status: 409, message: 'this Idempotency-Key was used with a different request body' },
  IDEMPOTENCY_IN_PROGRESS: {
    status: 409,
    message: 'a request with this Idempotency-Key is still being processed; retry later',
  },
  BODY_MALFORMED: { status: 400, message: 'the body is not valid JSON' },
  BODY_INVALID: { status: 400, message: 'the body does not match the schema' },
  CONTENT_TYPE_UNSUPPORTED: { status: 415, message: 'send application/json' },
  BODY_TOO_LARGE: { status: 413, message: 'the body is too large' },
  AMOUNT_MALFORMED: {
    status: 400,
    message: 'amount must be a decimal string of base units without sign, decimals, exponent or leading zeros',
  },
  AMOUNT_OUT_OF_RANGE: { status: 400, message: 'amount must be at most 18446744073709551615 (u64)' },
  AMOUNT_ZERO: { status: 400, message: 'amount must be at least 1 base unit' },
  PAYOUT_ID_MALFORMED: { status: 400, message: 'payoutId must be 1–200 bytes of UTF-8 without control characters' },
  ADDRESS_MALFORMED: { status: 400, message: 'not a base58 32-byte Solana address' },
  PAYOUT_ID_EXISTS: { status: 409, message: 'a payout with this payoutId already exists for this merchant' },
  PAYOUT_NOT_FOUND: { status: 404, message: 'no such payout for this merchant' },
  ROUTE_NOT_FOUND: { status: 404, message: 'no such route' },
  INVOICE_ID_MALFORMED: { status: 400, message: 'invoiceId must be 1–200 bytes of UTF-8 without control characters' },
  INVOICE_TEXT_INVALID: {
    status: 400,
    message: 'label (≤100), message and memo (≤500) must be characters without control characters',
  },
  EXPIRY_INVALID: { status: 400, message: 'expiresAt must be an ISO 8601 time in the future' },
  RECEIVING_ADDRESS_MISSING: {
    status: 400,
    message: 'name a recipient: this merchant has no receiving address configured',
  },
  MINT_NOT_FOUND: { status: 400, message: "the mint is not a token mint on the chain (or 'SOL')" },
  INVOICE_ID_EXISTS: { status: 409, message: 'an invoice with this invoiceId already exists for this merchant' },
  INVOICE_NOT_FOUND: { status: 404, message: 'no such invoice for this merchant' },
  CURSOR_MALFORMED: { status: 400, message: 'cursor must be a value a previous page returned' },
  FILTER_INVALID: { status: 400, message: 'a list filter (status, createdFrom, createdTo, limit) is invalid' },
  DATABASE_UNAVAILABLE: { status: 503, message: DATABASE_UNAVAILABLE_MESSAGE },
  INTERNAL: { status: 500, message: 'internal error; the request may be retried with the same Idempotency-Key' },
} as const;

export type ApiErrorCode = keyof typeof API_ERRORS;

export interface ApiErrorBody extends HttpErrorBody {
  code: ApiErrorCode;
}

/** An API error: the table's status, and its message unless a more precise one is given. */
export class ApiError extends HttpError<ApiErrorCode> {
  constructor(code: ApiErrorCode, message?: string) {
    super(API_ERRORS[code].status, code, message ?? API_ERRORS[code].message);
    this.name = 'ApiError';
  }
}

/** OncepayErrors from input validation (common/amount.ts, app/types.ts) → their API code. */
const FROM_ONCEPAY: Partial<Record<OncepayErrorCode, ApiErrorCode>> = {
  [AMOUNT_CODES.MALFORMED]: 'AMOUNT_MALFORMED',
  [AMOUNT_CODES.OUT_OF_RANGE]: 'AMOUNT_OUT_OF_RANGE',
  [PAYOUT_CODES.ID_MALFORMED]: 'PAYOUT_ID_MALFORMED',
  [PAYOUT_CODES.AMOUNT_ZERO]: 'AMOUNT_ZERO',
  [PAYOUT_CODES.ADDRESS_MALFORMED]: 'ADDRESS_MALFORMED',
  [INVOICE_CODES.ID_MALFORMED]: 'INVOICE_ID_MALFORMED',
  [INVOICE_CODES.TEXT_INVALID]: 'INVOICE_TEXT_INVALID',
  [INVOICE_CODES.EXPIRY_INVALID]: 'EXPIRY_INVALID',
  [INVOICE_CODES.RECEIVING_ADDRESS_MISSING]: 'RECEIVING_ADDRESS_MISSING',
  [INVOICE_CODES.MINT_NOT_FOUND]: 'MINT_NOT_FOUND',
  [INVOICE_CODES.ID_EXISTS]: 'INVOICE_ID_EXISTS',
};

export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const code = isOncepayError(e) ? FROM_ONCEPAY[e.code] : undefined;
  if (code) return new ApiError(code, (e as Error).message.replace(/^ONCEPAY__[A-Z_]+: /, ''));
  return new ApiError('INTERNAL');
}

export const errorBodySchema = {
  ...httpErrorBodySchema,
  $id: 'ApiError',
  properties: { ...httpErrorBodySchema.properties, code: { type: 'string', enum: Object.keys(API_ERRORS) } },
} as const;
