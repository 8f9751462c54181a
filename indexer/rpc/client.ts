// A small JSON-RPC client for a Solana node: one POST per call, a deadline per attempt (AbortSignal),
// retries with capped exponential backoff + jitter on 429 / 5xx / timeouts / network errors, and every failed
// attempt counted by kind. "Slot skipped" and "block not available" are answers, not failures: getBlock returns
// them as a status so the scanner can pass the first and stop at the second.
import { backoffDelay } from '../../common/backoff';
import { OncepayError } from '../../common/errors';
import { sleep as pause } from '../../common/sleep';
import { parseJsonExact } from '../decode/json-reader';
import { readJsonRpcAnswer } from '../../common/json-rpc-answer';
import {
  DEFAULT_RETRY,
  isRetryable,
  kindOfHttpStatus,
  kindOfRpcCode,
  retryAfterMs,
  RetryPolicy,
  RpcErrorKind,
} from './backoff';
import { RPC_CODES } from '../../common/errors/codes';

export type Commitment = 'finalized' | 'confirmed' | 'processed';

type FetchFn = typeof globalThis.fetch;

export interface RpcClientOptions {
  url: string;
  fetch?: FetchFn;
  retry?: Partial<RetryPolicy>;
  /** Called once per failed attempt (retried or not): feeds `oncepay_rpc_errors_total{kind}`. */
  onError?: (kind: RpcErrorKind, method: string) => void;
  /** Called before each retry wait (logging). */
  onRetry?: (info: { method: string; kind: RpcErrorKind; attempt: number; delayMs: number }) => void;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** getBlock outcome: a block, a slot that has none (skipped: pass it), or one not servable now (stop there). */
export type BlockResult =
  | { status: 'ok'; slot: number; block: unknown }
  | { status: 'skipped'; slot: number; rpcCode: number }
  | { status: 'not_available'; slot: number; rpcCode: number | null; message: string };

export interface RpcClient {
  call<T = unknown>(method: string, params?: unknown[], opts?: CallOptions): Promise<T>;
  getSlot(commitment: Commitment, opts?: CallOptions): Promise<number>;
  getBlocks(start: number, end: number, commitment: Commitment, opts?: CallOptions): Promise<number[]>;
  getBlock(slot: number, commitment: Commitment, opts?: CallOptions): Promise<BlockResult>;
  /** getTransaction (`json` encoding, v0 included) at `commitment`; null when the node has no such transaction there. */
  getTransaction(
    signature: string,
    commitment: Commitment,
    opts?: CallOptions,
  ): Promise<Record<string, unknown> | null>;
  /**
   * getSignatureStatuses for at most MAX_SIGNATURES_PER_STATUS_CALL signatures (searchTransactionHistory: true, so a
   * transaction older than the node's status cache is found too): one entry per signature, in order, null when the
   * node knows none.
   */
  getSignatureStatuses(signatures: readonly string[], opts?: CallOptions): Promise<Array<SignatureStatus | null>>;
}

/** A node answers getSignatureStatuses for at most this many signatures a call. */
export const MAX_SIGNATURES_PER_STATUS_CALL = 256;

/** One entry of a getSignatureStatuses answer, checked. */
export interface SignatureStatus {
  slot: number;
  /** The transaction's error (null: it succeeded). */
  err: unknown;
  /** processed | confirmed | finalized (a node without the field: finalized when `confirmations` is null). */
  confirmationStatus: Commitment;
}

function statusOf(v: unknown): SignatureStatus | null | undefined {
  if (v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) return undefined;
  const { slot, err, confirmationStatus, confirmations } = v as Record<string, unknown>;
  if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0) return undefined;
  const level =
    confirmationStatus === undefined || confirmationStatus === null
      ? confirmations === null
        ? 'finalized'
        : 'processed'
      : confirmationStatus;
  if (level !== 'processed' && level !== 'confirmed' && level !== 'finalized') return undefined;
  return { slot, err: err ?? null, confirmationStatus: level };
}

/** The codes an RPC call fails with. */
export type RpcCode = (typeof RPC_CODES)[keyof typeof RPC_CODES];

/** One failed attempt, classified. Thrown out of `call` only when not retryable or retries ran out. */
export class RpcCallError extends OncepayError {
  readonly kind: RpcErrorKind;
  readonly rpcCode: number | null;
  /** The server's `Retry-After` (HTTP errors only), within the policy cap: waited instead of the backoff. */
  retryAfterMs?: number;
  constructor(
    code: RpcCode,
    kind: RpcErrorKind,
    message: string,
    context: Record<string, unknown> & { rpcCode?: number | null } = {},
  ) {
    super(code, message, { kind, ...context });
    this.name = 'RpcCallError';
    this.kind = kind;
    this.rpcCode = context.rpcCode ?? null;
  }
}

function abortError(signal: AbortSignal): OncepayError {
  return new OncepayError(RPC_CODES.ABORTED, 'call aborted by the caller', { reason: String(signal.reason ?? '') });
}

export function createRpcClient(opts: RpcClientOptions): RpcClient {
  const doFetch: FetchFn = opts.fetch ?? globalThis.fetch;
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...opts.retry };
  // A wait between retries ended by the caller's abort is the call's abort: ONCEPAY__RPC__ABORTED, as for the request.
  const sleep = opts.sleep ?? ((ms: number, signal?: AbortSignal) => pause(ms, signal, () => abortError(signal!)));
  const random = opts.random ?? Math.random;
  let nextId = 1;

  async function attempt(method: string, params: unknown[], signal?: AbortSignal): Promise<unknown> {
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const id = nextId++;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal: combined,
      });
      text = await res.text();
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      if (timeout.aborted) {
        throw new RpcCallError(RPC_CODES.TIMEOUT, 'timeout', `${method}: no response within ${policy.timeoutMs} ms`, {
          method,
        });
      }
      throw new RpcCallError(RPC_CODES.NETWORK, 'network', `${method}: ${(e as Error).message}`, {
        method,
        cause: String((e as Error).cause ?? ''),
      });
    }
    const httpKind = kindOfHttpStatus(res.status);
    if (httpKind) {
      const err = new RpcCallError(RPC_CODES.HTTP_STATUS, httpKind, `${method}: HTTP ${res.status}`, {
        method,
        status: res.status,
      });
      err.retryAfterMs = retryAfterMs(res.headers.get('retry-after'), policy.capMs);
      throw err;
    }
    // Exact integers: a u64 beyond 2^53 in a block (lamport balances) must not be rounded on the way in.
    const answer = readJsonRpcAnswer(method, text, parseJsonExact);
    if (!answer.ok) {
      const rpcCode = answer.context.rpcCode ?? null;
      const kind =
        answer.code === RPC_CODES.MALFORMED_RESPONSE
          ? 'malformed'
          : rpcCode === null
            ? 'rpc_error'
            : kindOfRpcCode(rpcCode);
      throw new RpcCallError(answer.code, kind, answer.message, answer.context);
    }
    return answer.result;
  }

  async function call<T>(method: string, params: unknown[] = [], callOpts: CallOptions = {}): Promise<T> {
    const { signal } = callOpts;
    for (let n = 1; ; n++) {
      if (signal?.aborted) throw abortError(signal);
      try {
        return (await attempt(method, params, signal)) as T;
      } catch (e) {
        if (!(e instanceof RpcCallError)) throw e;
        opts.onError?.(e.kind, method);
        if (!isRetryable(e.kind)) throw e;
        if (n >= policy.attempts) {
          throw new RpcCallError(
            RPC_CODES.RETRIES_EXHAUSTED,
            e.kind,
            `${method}: gave up after ${n} attempts: ${e.message}`,
            {
              method,
              attempts: n,
              rpcCode: e.rpcCode,
            },
          );
        }
        const delayMs = e.retryAfterMs ?? backoffDelay(n, policy, random());
        opts.onRetry?.({ method, kind: e.kind, attempt: n, delayMs });
        await sleep(delayMs, signal);
      }
    }
  }

  return {
    call,
    async getSlot(commitment, o) {
      const slot = await call<unknown>('getSlot', [{ commitment }], o);
      if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0) {
        throw new RpcCallError(
          RPC_CODES.MALFORMED_RESPONSE,
          'malformed',
          `getSlot: not a slot: ${JSON.stringify(slot)}`,
          {
            method: 'getSlot',
          },
        );
      }
      return slot;
    },
    async getBlocks(start, end, commitment, o) {
      const slots = await call<unknown>('getBlocks', [start, end, { commitment }], o);
      if (
        !Array.isArray(slots) ||
        !slots.every((s) => typeof s === 'number' && Number.isSafeInteger(s) && s >= start && s <= end)
      ) {
        throw new RpcCallError(
          RPC_CODES.MALFORMED_RESPONSE,
          'malformed',
          `getBlocks(${start}, ${end}): not a list of slots in range`,
          {
            method: 'getBlocks',
          },
        );
      }
      return [...(slots as number[])].sort((a, b) => a - b);
    },
    async getBlock(slot, commitment, o) {
      try {
        const block = await call<unknown>(
          'getBlock',
          [
            slot,
            {
              commitment,
              encoding: 'json',
              transactionDetails: 'full',
              rewards: false,
              maxSupportedTransactionVersion: 0,
            },
          ],
          o,
        );
        if (block === null || typeof block !== 'object') {
          // Older nodes answer null for a block they do not have: not proof that the slot is empty.
          return { status: 'not_available', slot, rpcCode: null, message: 'getBlock returned null' };
        }
        return { status: 'ok', slot, block };
      } catch (e) {
        if (e instanceof RpcCallError && e.kind === 'slot_skipped')
          return { status: 'skipped', slot, rpcCode: e.rpcCode ?? 0 };
        if (e instanceof RpcCallError && e.kind === 'block_not_available') {
          return { status: 'not_available', slot, rpcCode: e.rpcCode, message: e.message };
        }
        throw e;
      }
    },
    async getTransaction(signature, commitment, o) {
      const tx = await call<unknown>(
        'getTransaction',
        [signature, { commitment, encoding: 'json', maxSupportedTransactionVersion: 0 }],
        o,
      );
      if (tx === null) return null;
      if (typeof tx !== 'object' || Array.isArray(tx)) {
        throw new RpcCallError(
          RPC_CODES.MALFORMED_RESPONSE,
          'malformed',
          `getTransaction(${signature}): not a transaction`,
          {
            method: 'getTransaction',
          },
        );
      }
      return tx as Record<string, unknown>;
    },
    async getSignatureStatuses(signatures, o) {
      if (signatures.length === 0) return [];
      if (signatures.length > MAX_SIGNATURES_PER_STATUS_CALL)
        throw new OncepayError(
          RPC_CODES.BATCH_TOO_LARGE,
          `getSignatureStatuses takes at most ${MAX_SIGNATURES_PER_STATUS_CALL} signatures a call`,
        );
      const r = await call<unknown>('getSignatureStatuses', [signatures, { searchTransactionHistory: true }], o);
      const value = r !== null && typeof r === 'object' ? (r as { value?: unknown }).value : undefined;
      const statuses = Array.isArray(value) && value.length === signatures.length ? value.map(statusOf) : undefined;
      if (!statuses || statuses.some((x) => x === undefined)) {
        throw new RpcCallError(
          RPC_CODES.MALFORMED_RESPONSE,
          'malformed',
          `getSignatureStatuses: not one status (or null) per signature asked (${signatures.length})`,
          { method: 'getSignatureStatuses' },
        );
      }
      return statuses as Array<SignatureStatus | null>;
    },
  };
}
