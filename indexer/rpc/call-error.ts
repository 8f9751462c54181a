// How an RPC call fails: one failed attempt, classified by kind (what the retry policy decides on), and the caller's
// abort, which is never retried.
import { OncepayError } from '../../common/errors';
import { RPC_CODES } from '../../common/errors/codes';
import type { RpcErrorKind } from './backoff';

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

/** The call ended by the caller's signal (ONCEPAY__RPC__ABORTED). */
export function abortError(signal: AbortSignal): OncepayError {
  return new OncepayError(RPC_CODES.ABORTED, 'call aborted by the caller', { reason: String(signal.reason ?? '') });
}

/** A node's answer that is not what the method promises. */
export function malformed(method: string, message: string): RpcCallError {
  return new RpcCallError(RPC_CODES.MALFORMED_RESPONSE, 'malformed', message, { method });
}
