// The websocket subscription source's pure parts: its options, the JSON-RPC messages it sends and reads
// (logsSubscribe with `mentions`, logsNotification), the catch-up over getSignaturesForAddress pages, and the
// change of the watched set. No I/O here (ws-source.ts is the shell).
import { OncepayError } from '../../common/errors';
import { SOURCE_CODES } from '../../common/errors/codes';
import type { SubscriptionOptions } from './stream-options';

export const WS_SOURCE = 'ws' as const;

/**
 * confirmed: a second, `confirmed` subscription per address feeds the provisional rows. fromSlot: where the first
 * catch-up starts. checkpointMs: the checkpoint moves to a finalized slot read this long before, every
 * notification received by then applied (a notification later than that after its slot became final, lost in a
 * crash, is read by the next catch-up only within catchUpMarginSlots; otherwise the scanner credits it).
 */
export interface WsOptions extends SubscriptionOptions {
  /** The catch-up after a (re)connect reads from this many slots below the checkpoint. */
  catchUpMarginSlots: number;
  /** getTransaction calls in flight. */
  concurrency: number;
  /** A notified transaction the node does not return yet is asked again this many times (with backoff). */
  fetchAttempts: number;
}

export const DEFAULT_WS: Omit<WsOptions, 'cluster'> = {
  commitment: 'finalized',
  pingMs: 10_000,
  idleTimeoutMs: 35_000,
  refreshMs: 5_000,
  checkpointMs: 2_000,
  catchUpMarginSlots: 150,
  concurrency: 8,
  fetchAttempts: 6,
  backoff: { baseMs: 500, capMs: 30_000 },
};

export type WsCommitment = 'confirmed' | 'finalized';

/** One JSON-RPC request over the socket. */
export function logsSubscribeRequest(id: number, address: string, commitment: WsCommitment): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'logsSubscribe',
    // One address per `mentions`: the node refuses more.
    params: [{ mentions: [address] }, { commitment }],
  });
}

/** slotSubscribe: the node's progress on the same socket (ws-source: when the logs subscriptions took effect). */
export function slotSubscribeRequest(id: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'slotSubscribe' });
}

export function logsUnsubscribeRequest(id: number, subscription: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'logsUnsubscribe', params: [subscription] });
}

export type WsMessage =
  | { kind: 'result'; id: number; result: unknown }
  | { kind: 'error'; id: number | null; code: number | null; message: string }
  | { kind: 'logs'; subscription: number; slot: number; signature: string; failed: boolean }
  | { kind: 'slot'; subscription: number; slot: number }
  | { kind: 'other'; method: string | null }
  | { kind: 'malformed'; reason: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isSlot(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** A message from the node: a request's answer, an error, a logs notification, or something else. */
export function parseWsMessage(text: string): WsMessage {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return { kind: 'malformed', reason: 'not JSON' };
  }
  if (!isRecord(m)) return { kind: 'malformed', reason: 'not a JSON-RPC object' };
  if (m.method === 'logsNotification') {
    const p = m.params;
    if (!isRecord(p) || !isRecord(p.result) || !isRecord(p.result.value) || !isRecord(p.result.context))
      return { kind: 'malformed', reason: 'logsNotification without params.result.{context,value}' };
    const { value, context } = p.result;
    if (typeof p.subscription !== 'number' || typeof value.signature !== 'string' || !isSlot(context.slot))
      return { kind: 'malformed', reason: 'logsNotification without subscription, signature or slot' };
    return {
      kind: 'logs',
      subscription: p.subscription,
      slot: context.slot,
      signature: value.signature,
      failed: value.err !== null && value.err !== undefined,
    };
  }
  if (m.method === 'slotNotification') {
    const p = m.params;
    if (!isRecord(p) || typeof p.subscription !== 'number' || !isRecord(p.result) || !isSlot(p.result.slot))
      return { kind: 'malformed', reason: 'slotNotification without subscription or params.result.slot' };
    return { kind: 'slot', subscription: p.subscription, slot: p.result.slot };
  }
  if (typeof m.method === 'string') return { kind: 'other', method: m.method };
  if (isRecord(m.error)) {
    return {
      kind: 'error',
      id: typeof m.id === 'number' ? m.id : null,
      code: typeof m.error.code === 'number' ? m.error.code : null,
      message: String(m.error.message ?? 'error'),
    };
  }
  if (typeof m.id === 'number' && 'result' in m) return { kind: 'result', id: m.id, result: m.result };
  return { kind: 'malformed', reason: 'neither a notification nor an answer' };
}

/** One entry of getSignaturesForAddress (newest first). */
export interface SignatureInfo {
  signature: string;
  slot: number;
  err: unknown;
}

/**
 * One page of getSignaturesForAddress, newest first: the succeeded transactions at or above `from` to read, and
 * the `before` of the next page (null: this page reached below `from`, or was the last one).
 */
export function catchUpPage(
  page: readonly SignatureInfo[],
  from: number,
  limit: number,
): { read: Array<{ signature: string; slot: number }>; before: string | null } {
  const read: Array<{ signature: string; slot: number }> = [];
  let below = false;
  for (const s of page) {
    if (s.slot < from) {
      below = true;
      continue;
    }
    if (s.err === null || s.err === undefined) read.push({ signature: s.signature, slot: s.slot });
  }
  const more = !below && page.length >= limit;
  return { read, before: more ? page[page.length - 1].signature : null };
}

/** What to subscribe and what to drop when the watched set changes. */
export function diffWatched(
  current: Iterable<string>,
  next: Iterable<string>,
): { subscribe: string[]; unsubscribe: string[] } {
  const have = new Set(current);
  const want = new Set(next);
  return {
    subscribe: [...want].filter((a) => !have.has(a)).sort(),
    unsubscribe: [...have].filter((a) => !want.has(a)).sort(),
  };
}

/** The catch-up's first slot: a margin below the checkpoint; without one, --from-slot; else none (live only). */
export function catchUpFrom(checkpoint: number | null, fromSlot: number | undefined, margin: number): number | null {
  if (checkpoint !== null) return Math.max(0, checkpoint - margin);
  return fromSlot ?? null;
}

/** The HTTP JSON-RPC URL beside a websocket URL (same host and port): ws → http, wss → https. */
export function rpcUrlOfWs(ws: string): string {
  const u = new URL(ws);
  if (u.protocol === 'ws:') u.protocol = 'http:';
  else if (u.protocol === 'wss:') u.protocol = 'https:';
  else throw new OncepayError(SOURCE_CODES.INVALID_OPTION, `--ws must be a ws:// or wss:// URL, got ${ws}`);
  return u.toString();
}
