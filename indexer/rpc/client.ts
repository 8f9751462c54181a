// A small JSON-RPC client for a Solana node: one POST per call, a deadline per attempt (AbortSignal),
// retries with capped exponential backoff + jitter on 429 / 5xx / timeouts / network errors, and every failed
// attempt counted by kind. "Slot skipped" and "block not available" are answers, not failures: getBlock returns
// them as a status so the scanner can pass the first and stop at the second. One attempt is attempt.ts, its
// failures call-error.ts, the checks of each method's answer answers.ts; this is the retry loop and the methods.
import { backoffDelay } from '../../common/backoff';
import { OncepayError } from '../../common/errors';
import { sleep as pause } from '../../common/sleep';
import { RPC_CODES } from '../../common/errors/codes';
import {
  blockAnswer,
  blockFailure,
  type BlockResult,
  MAX_SIGNATURES_PER_STATUS_CALL,
  type SignatureStatus,
  slotAnswer,
  slotsAnswer,
  statusesAnswer,
  transactionAnswer,
} from './answers';
import { attempt, type RpcTransport } from './attempt';
import { DEFAULT_RETRY, isRetryable, RetryPolicy, RpcErrorKind } from './backoff';
import { abortError, RpcCallError } from './call-error';

export { MAX_SIGNATURES_PER_STATUS_CALL, type BlockResult, type SignatureStatus } from './answers';
export { RpcCallError, type RpcCode } from './call-error';

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

/** The retry loop: `method` attempted until it succeeds, fails for good, runs out of attempts or is aborted. */
async function callWithRetries<T>(
  t: RpcTransport,
  o: { onError?: RpcClientOptions['onError']; onRetry?: RpcClientOptions['onRetry'] },
  waits: { sleep: (ms: number, signal?: AbortSignal) => Promise<void>; random: () => number },
  method: string,
  params: unknown[],
  signal: AbortSignal | undefined,
): Promise<T> {
  for (let n = 1; ; n++) {
    if (signal?.aborted) throw abortError(signal);
    try {
      return (await attempt(t, method, params, signal)) as T;
    } catch (e) {
      if (!(e instanceof RpcCallError)) throw e;
      o.onError?.(e.kind, method);
      if (!isRetryable(e.kind)) throw e;
      if (n >= t.policy.attempts) {
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
      const delayMs = e.retryAfterMs ?? backoffDelay(n, t.policy, waits.random());
      o.onRetry?.({ method, kind: e.kind, attempt: n, delayMs });
      await waits.sleep(delayMs, signal);
    }
  }
}

export function createRpcClient(opts: RpcClientOptions): RpcClient {
  let nextId = 1;
  const transport: RpcTransport = {
    url: opts.url,
    fetch: opts.fetch ?? globalThis.fetch,
    policy: { ...DEFAULT_RETRY, ...opts.retry },
    nextId: () => nextId++,
  };
  const waits = {
    // A wait between retries ended by the caller's abort is the call's abort: ONCEPAY__RPC__ABORTED, as for the request.
    sleep: opts.sleep ?? ((ms: number, signal?: AbortSignal) => pause(ms, signal, () => abortError(signal!))),
    random: opts.random ?? Math.random,
  };
  const call = <T>(method: string, params: unknown[] = [], callOpts: CallOptions = {}): Promise<T> =>
    callWithRetries<T>(transport, opts, waits, method, params, callOpts.signal);

  return {
    call,
    async getSlot(commitment, o) {
      return slotAnswer(await call<unknown>('getSlot', [{ commitment }], o));
    },
    async getBlocks(start, end, commitment, o) {
      return slotsAnswer(await call<unknown>('getBlocks', [start, end, { commitment }], o), start, end);
    },
    async getBlock(slot, commitment, o) {
      const config = {
        commitment,
        encoding: 'json',
        transactionDetails: 'full',
        rewards: false,
        maxSupportedTransactionVersion: 0,
      };
      try {
        return blockAnswer(slot, await call<unknown>('getBlock', [slot, config], o));
      } catch (e) {
        const outcome = blockFailure(slot, e);
        if (outcome === null) throw e;
        return outcome;
      }
    },
    async getTransaction(signature, commitment, o) {
      const config = { commitment, encoding: 'json', maxSupportedTransactionVersion: 0 };
      return transactionAnswer(signature, await call<unknown>('getTransaction', [signature, config], o));
    },
    async getSignatureStatuses(signatures, o) {
      if (signatures.length === 0) return [];
      if (signatures.length > MAX_SIGNATURES_PER_STATUS_CALL)
        throw new OncepayError(
          RPC_CODES.BATCH_TOO_LARGE,
          `getSignatureStatuses takes at most ${MAX_SIGNATURES_PER_STATUS_CALL} signatures a call`,
        );
      const r = await call<unknown>('getSignatureStatuses', [signatures, { searchTransactionHistory: true }], o);
      return statusesAnswer(r, signatures.length);
    },
  };
}
