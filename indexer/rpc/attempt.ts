// One JSON-RPC attempt: one POST with its own deadline (AbortSignal.timeout, joined with the caller's signal), the
// failure classified — timeout, network, HTTP status (with its Retry-After), RPC error code, malformed answer — and
// u64 values read exactly. Retrying is the client's (client.ts).
import { readJsonRpcAnswer } from '../../common/json-rpc-answer';
import { RPC_CODES } from '../../common/errors/codes';
import { parseJsonExact } from '../decode/json-reader';
import { kindOfHttpStatus, kindOfRpcCode, retryAfterMs, type RetryPolicy } from './backoff';
import { abortError, RpcCallError } from './call-error';

/** Where and how attempts are sent. */
export interface RpcTransport {
  url: string;
  fetch: typeof globalThis.fetch;
  policy: RetryPolicy;
  /** The request id of the next attempt. */
  nextId(): number;
}

/** One attempt of `method`: its result, or an RpcCallError (the caller's abort: ONCEPAY__RPC__ABORTED). */
export async function attempt(
  t: RpcTransport,
  method: string,
  params: unknown[],
  signal?: AbortSignal,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(t.policy.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const id = t.nextId();
  let res: Response;
  let text: string;
  try {
    res = await t.fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      signal: combined,
    });
    text = await res.text();
  } catch (e) {
    if (signal?.aborted) throw abortError(signal);
    if (timeout.aborted) {
      throw new RpcCallError(RPC_CODES.TIMEOUT, 'timeout', `${method}: no response within ${t.policy.timeoutMs} ms`, {
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
    err.retryAfterMs = retryAfterMs(res.headers.get('retry-after'), t.policy.capMs);
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
