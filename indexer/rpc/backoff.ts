// Pure retry logic for the JSON-RPC client: its retry policy and which failures are worth another attempt (the
// wait before each is common/backoff.ts's backoffDelay). No I/O here, so it is unit-tested directly.
import type { BackoffPolicy } from '../../common/backoff';

/** Solana JSON-RPC server error codes we treat specially (solana rpc-client-api `custom_error.rs`). */
export const SOLANA_RPC = {
  BLOCK_CLEANED_UP: -32001,
  BLOCK_NOT_AVAILABLE: -32004,
  NODE_UNHEALTHY: -32005,
  SLOT_SKIPPED: -32007,
  LONG_TERM_STORAGE_SLOT_SKIPPED: -32009,
  BLOCK_STATUS_NOT_AVAILABLE_YET: -32014,
  LONG_TERM_STORAGE_UNREACHABLE: -32019,
} as const;

export interface RetryPolicy extends BackoffPolicy {
  /** Total attempts per call, the first included (≥ 1). */
  attempts: number;
  /** Per-attempt deadline, in ms: a request with no response by then is aborted and counts as a timeout. */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 200, capMs: 10_000, timeoutMs: 30_000 };

/** What went wrong on one attempt; also the `kind` label of `oncepay_rpc_errors_total`. */
export type RpcErrorKind =
  | 'http_429'
  | 'http_5xx'
  | 'http_4xx'
  | 'timeout'
  | 'network'
  | 'malformed'
  | 'node_unhealthy'
  | 'rpc_error'
  | 'slot_skipped'
  | 'block_not_available';

/** Kinds that another attempt may fix. */
export function isRetryable(kind: RpcErrorKind): boolean {
  return (
    kind === 'http_429' || kind === 'http_5xx' || kind === 'timeout' || kind === 'network' || kind === 'node_unhealthy'
  );
}

export function kindOfHttpStatus(status: number): RpcErrorKind | undefined {
  if (status >= 200 && status < 300) return undefined;
  if (status === 429) return 'http_429';
  if (status >= 500) return 'http_5xx';
  return 'http_4xx';
}

/** Classify a JSON-RPC `error.code` returned by a Solana node. */
export function kindOfRpcCode(code: number): RpcErrorKind {
  switch (code) {
    // The slot has no block and never will: safe to pass.
    case SOLANA_RPC.SLOT_SKIPPED:
    case SOLANA_RPC.LONG_TERM_STORAGE_SLOT_SKIPPED:
      return 'slot_skipped';
    // The block may exist but this node cannot serve it (yet, or any more): never pass it.
    case SOLANA_RPC.BLOCK_NOT_AVAILABLE:
    case SOLANA_RPC.BLOCK_STATUS_NOT_AVAILABLE_YET:
    case SOLANA_RPC.BLOCK_CLEANED_UP:
      return 'block_not_available';
    case SOLANA_RPC.NODE_UNHEALTHY:
    case SOLANA_RPC.LONG_TERM_STORAGE_UNREACHABLE:
      return 'node_unhealthy';
    default:
      return 'rpc_error';
  }
}

/** Honour a `Retry-After` header (seconds) when a server sends one, within the policy cap. */
export function retryAfterMs(header: string | null, capMs: number): number | undefined {
  if (!header) return undefined;
  const s = Number(header);
  if (!Number.isFinite(s) || s < 0) return undefined;
  return Math.min(Math.round(s * 1000), capMs);
}
