// Pure reading of a webhook delivery: which shapes are accepted, where the event id comes from, and the list of
// transaction items to decode. No I/O.
//
// Accepted bodies (Content-Type application/json, UTF-8):
//   1. one getTransaction result (json or jsonParsed encoding), as the RPC returns it under `result`;
//   2. a JSON-RPC envelope around one: { "jsonrpc": "2.0", "result": { …getTransaction result… } };
//   3. a JSON array of (1) — Helius "raw" webhooks and similar providers deliver exactly this;
//   4. an envelope { "id"|"eventId"|"event_id"?: string, "events"|"transactions"|"data"|"signatures": [ (1)… ] }.
// When deliveries are verified against the chain (the default), an item is only a pointer: a transaction's
// signature is all that is used (an item may also be the bare base58 signature), and its own content is only
// compared with the chain's. With --trust-provider each item must carry `transaction` and `meta`; anything else
// (e.g. provider-"enhanced" summaries) is refused item by item into the dead letters.
// Event id (dedup key), first found wins: header `X-Oncepay-Event-Id`, `Webhook-Id` (Standard Webhooks),
// `X-Event-Id`, then the envelope's id field. None → no event dedup (receipts are still applied once).
import { isOncepayError } from '../../common/errors';
import bs58 from 'bs58';
import { parseJsonExact } from '../decode/json-reader';
import { decodeWireTransaction } from '../decode/wire-transaction';
import { WEBHOOK_CODES } from '../../common/errors/codes';

export const EVENT_ID_HEADERS = ['x-oncepay-event-id', 'webhook-id', 'x-event-id'] as const;
const EVENT_ID = /^[\x21-\x7e]{1,200}$/;

export type ParsedDelivery =
  | {
      ok: true;
      items: unknown[];
      bodyEventId: string | null;
      shape: 'transaction' | 'rpc-envelope' | 'array' | 'events-envelope';
    }
  | { ok: false; code: string; message: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseDelivery(raw: Buffer): ParsedDelivery {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    return { ok: false, code: WEBHOOK_CODES.MALFORMED_JSON, message: 'body is not UTF-8' };
  }
  let v: unknown;
  try {
    v = parseJsonExact(text);
  } catch (e) {
    return {
      ok: false,
      code: WEBHOOK_CODES.MALFORMED_JSON,
      message: isOncepayError(e) ? e.message : 'body is not JSON',
    };
  }
  if (Array.isArray(v)) return { ok: true, items: v, bodyEventId: null, shape: 'array' };
  if (!isRecord(v))
    return { ok: false, code: WEBHOOK_CODES.UNSUPPORTED_SHAPE, message: 'body is neither an object nor an array' };
  for (const field of ['events', 'transactions', 'data', 'signatures']) {
    if (Array.isArray(v[field])) {
      const idField = v.eventId ?? v.event_id ?? v.id;
      if (idField !== undefined && idField !== null && (typeof idField !== 'string' || !EVENT_ID.test(idField))) {
        return {
          ok: false,
          code: WEBHOOK_CODES.INVALID_EVENT_ID,
          message: 'envelope id must be 1–200 printable ASCII characters',
        };
      }
      return {
        ok: true,
        items: v[field] as unknown[],
        bodyEventId: (idField as string | undefined) ?? null,
        shape: 'events-envelope',
      };
    }
  }
  if ('jsonrpc' in v && 'result' in v) {
    return { ok: true, items: [v.result], bodyEventId: null, shape: 'rpc-envelope' };
  }
  if ('transaction' in v) return { ok: true, items: [v], bodyEventId: null, shape: 'transaction' };
  return {
    ok: false,
    code: WEBHOOK_CODES.UNSUPPORTED_SHAPE,
    message: 'expected a transaction, an array of them, or { events: [...] }',
  };
}

/** The event id from headers (first of EVENT_ID_HEADERS present) else the body's; undefined if one is invalid. */
export function eventIdOf(
  headers: Record<string, string | string[] | undefined>,
  bodyEventId: string | null,
): { ok: true; eventId: string | null } | { ok: false } {
  for (const h of EVENT_ID_HEADERS) {
    const v = headers[h];
    if (v === undefined) continue;
    const s = Array.isArray(v) ? v[0] : v;
    return EVENT_ID.test(s) ? { ok: true, eventId: s } : { ok: false };
  }
  return { ok: true, eventId: bodyEventId };
}

/** An item worth handing to the decoder: an object with `transaction` and `meta` keys. */
export function itemProblem(item: unknown): string | null {
  if (!isRecord(item)) return 'item is not an object';
  if (!('transaction' in item)) return 'item has no `transaction` (only raw getTransaction-shaped items are accepted)';
  if (!('meta' in item)) return 'item has no `meta`';
  return null;
}

function isSignature(s: unknown): s is string {
  if (typeof s !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(s)) return false;
  try {
    return bs58.decode(s).length === 64;
  } catch {
    return false;
  }
}

/** The transaction signature an item names: a bare signature, or signatures[0] of a transaction in any encoding. */
export function signatureOfItem(item: unknown): string | null {
  if (typeof item === 'string') return isSignature(item) ? item : null;
  if (!isRecord(item)) return null;
  const inner = 'jsonrpc' in item && isRecord(item.result) ? item.result : item;
  const tx = inner.transaction;
  if (isRecord(tx) && Array.isArray(tx.signatures)) return isSignature(tx.signatures[0]) ? tx.signatures[0] : null;
  if (Array.isArray(tx) && typeof tx[0] === 'string' && typeof tx[1] === 'string') {
    try {
      const s = decodeWireTransaction(tx[0], tx[1]).signatures[0];
      return isSignature(s) ? s : null;
    } catch {
      return null;
    }
  }
  return null;
}
