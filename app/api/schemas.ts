// JSON schemas of the merchant API: they validate requests, shape (and limit) responses, and feed /openapi.json.
export const createPayoutBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['payoutId', 'recipient', 'mint', 'amount'],
  properties: {
    payoutId: {
      type: 'string',
      minLength: 1,
      description: "The merchant's own id of this payout (1–200 UTF-8 bytes); it determines the op_id.",
    },
    recipient: { type: 'string', description: 'Recipient token account (base58).' },
    mint: { type: 'string', description: 'Token mint (base58).' },
    amount: {
      type: 'string',
      pattern: '^[0-9]+$',
      description: 'Base units as a decimal string, at most 18446744073709551615.',
    },
  },
} as const;

const nullableString = { type: ['string', 'null'] } as const;

export const attemptSchema = {
  type: 'object',
  required: [
    'attemptNo',
    'signature',
    'status',
    'blockhash',
    'lastValidBlockHeight',
    'slot',
    'error',
    'sendCount',
    'createdAt',
  ],
  properties: {
    attemptNo: { type: 'integer' },
    signature: { type: 'string' },
    status: { type: 'string', enum: ['built', 'sent', 'landed', 'failed', 'expired'] },
    blockhash: { type: 'string' },
    lastValidBlockHeight: { type: 'string' },
    slot: nullableString,
    error: nullableString,
    sendCount: { type: 'integer' },
    createdAt: { type: 'string' },
  },
} as const;

export const payoutSchema = {
  type: 'object',
  required: [
    'id',
    'payoutId',
    'state',
    'recipient',
    'mint',
    'amount',
    'opId',
    'opPda',
    'programId',
    'merchant',
    'proof',
    'attempts',
    'createdAt',
  ],
  properties: {
    id: { type: 'string', description: "oncepay's id of the payout row" },
    payoutId: { type: 'string' },
    state: { type: 'string', enum: ['pending', 'executing', 'succeeded', 'conflict', 'failed'] },
    recipient: { type: 'string' },
    mint: { type: 'string' },
    amount: { type: 'string' },
    opId: {
      type: 'string',
      description: '64 hex characters: sha256("oncepay:payout:v1" ‖ program ‖ merchant ‖ payoutId)',
    },
    opPda: { type: 'string' },
    programId: { type: 'string' },
    merchant: { type: 'string' },
    proof: {
      type: ['object', 'null'],
      description: 'On-chain proof once executed: the signature that created the op account, its slot, the op account.',
      properties: { signature: nullableString, slot: nullableString, opPda: { type: 'string' } },
    },
    conflict: { description: 'What the op account records when it disagrees with this row (state conflict).' },
    error: nullableString,
    attempts: { type: 'array', items: attemptSchema },
    createdAt: { type: 'string' },
    finishedAt: nullableString,
  },
} as const;

/** An error answer ({ code, message }, codes in errors.ts) documented for one status. */
const errorResponse = (description: string) => ({ $ref: 'ApiError#', description }) as const;

export const errorResponses = {
  400: errorResponse('Malformed request: IDEMPOTENCY_KEY_*, BODY_*, AMOUNT_*, PAYOUT_ID_MALFORMED, ADDRESS_MALFORMED.'),
  401: errorResponse(
    'UNAUTHORIZED: missing or unknown API key. Send `Authorization: Bearer <api key>` (scheme in any case).',
  ),
  404: errorResponse("PAYOUT_NOT_FOUND (also for another merchant's payout) or ROUTE_NOT_FOUND."),
  409: errorResponse('IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS or PAYOUT_ID_EXISTS.'),
  413: errorResponse('BODY_TOO_LARGE.'),
  415: errorResponse('CONTENT_TYPE_UNSUPPORTED: the body must be application/json.'),
  500: errorResponse('INTERNAL: nothing was committed; retry with the same Idempotency-Key.'),
  503: errorResponse(
    'DATABASE_UNAVAILABLE: the database is unreachable; retry with the same Idempotency-Key after Retry-After seconds.',
  ),
} as const;
