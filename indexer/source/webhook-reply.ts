// The webhook's 2xx answer: its JSON schema (the route's 200 and 202 responses), its type, and the body built from a
// delivery's counts (every count not given is zero). Pure: no fastify, no database.

export const webhookReplySchema = {
  type: 'object',
  required: [
    'ok',
    'duplicate',
    'eventId',
    'transactions',
    'receipts',
    'inserted',
    'duplicates',
    'deadLettered',
    'rejected',
  ],
  properties: {
    ok: { type: 'boolean' },
    duplicate: { type: 'boolean' },
    eventId: { type: ['string', 'null'] },
    transactions: { type: 'integer' },
    receipts: { type: 'integer' },
    inserted: { type: 'integer' },
    duplicates: { type: 'integer' },
    deadLettered: { type: 'integer' },
    rejected: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'code', 'message'],
        properties: { index: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
    verified: { type: 'boolean' },
    credited: { type: 'integer' },
    pending: { type: 'integer' },
    dropped: { type: 'integer' },
  },
} as const;

export interface WebhookReply {
  ok: boolean;
  duplicate: boolean;
  eventId: string | null;
  transactions: number;
  receipts: number;
  inserted: number;
  duplicates: number;
  deadLettered: number;
  rejected: Array<{ index: number; code: string; message: string }>;
  /** Verified against the chain (false only with trustProvider). */
  verified: boolean;
  /** Hints (signatures) the chain confirmed and that are applied. */
  credited: number;
  /** Hints durably held, not yet confirmed by the chain: checked again in the background. */
  pending: number;
  /** Hints the chain refuted (failed, refused, never seen). */
  dropped: number;
}

/** What every answer to one delivery shares. */
export interface ReplyBase {
  eventId: string | null;
  /** Transaction items in the delivery. */
  transactions: number;
  verified: boolean;
}

/** The 2xx body of a delivery: `ok`, its event id and item count, and the counts given (every other count 0). */
export function replyBody(base: ReplyBase, counts: Partial<WebhookReply>): WebhookReply {
  return {
    ok: true,
    duplicate: false,
    eventId: base.eventId,
    transactions: base.transactions,
    receipts: 0,
    inserted: 0,
    duplicates: 0,
    deadLettered: 0,
    rejected: [],
    verified: base.verified,
    credited: 0,
    pending: 0,
    dropped: 0,
    ...counts,
  };
}
