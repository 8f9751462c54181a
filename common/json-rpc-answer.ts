// The body of a JSON-RPC answer, read the one way both of our clients read it (indexer/rpc/client.ts over fetch,
// app/payout/json-rpc.ts over node's http): its `result`, or why it is none, with the RPC area's code. Pure: the
// transport, the HTTP status, deadlines and retries stay with each client. Nothing is trusted for being JSON: the
// caller checks every field of the result it uses.
import { RPC_CODES } from './errors/codes';

export type JsonRpcAnswer =
  | { ok: true; result: unknown }
  | {
      ok: false;
      code: typeof RPC_CODES.MALFORMED_RESPONSE | typeof RPC_CODES.ERROR_RESPONSE;
      /** `<method>: <why>`, the message of the error the client throws. */
      message: string;
      /** The method; for an error answer the node's own code (null when it gave none). */
      context: { method: string; rpcCode?: number | null; head?: string };
    };

/** `text`, the body of an answer to `method`, parsed by `parse` (the indexer keeps integers exact). */
export function readJsonRpcAnswer(
  method: string,
  text: string,
  parse: (text: string) => unknown = JSON.parse,
): JsonRpcAnswer {
  const malformed = (why: string, head?: string): JsonRpcAnswer => ({
    ok: false,
    code: RPC_CODES.MALFORMED_RESPONSE,
    message: `${method}: ${why}`,
    context: head === undefined ? { method } : { method, head },
  });
  let body: unknown;
  try {
    body = parse(text);
  } catch {
    return malformed('response is not JSON', text.slice(0, 200));
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return malformed('response is not a JSON-RPC object');
  const r = body as { result?: unknown; error?: { code?: unknown; message?: unknown } | null };
  if (r.error !== undefined && r.error !== null) {
    const rpcCode = typeof r.error.code === 'number' ? r.error.code : null;
    return {
      ok: false,
      code: RPC_CODES.ERROR_RESPONSE,
      message: `${method}: ${String(r.error.message ?? 'error')}`,
      context: { method, rpcCode },
    };
  }
  if (!('result' in r)) return malformed('response has neither result nor error');
  return { ok: true, result: r.result };
}
