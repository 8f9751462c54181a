// A lean JSON-RPC POST for the executor's own reads of the chain (chain.ts getOpAccount): node's http(s) over a
// keep-alive agent, one JSON.parse, no schema library. web3.js's Connection spends about 1.5 ms of CPU per call on
// its transport (fetch and its wrappers: measured against the localnet, 2.2–3.0 ms per getAccountInfo against
// 0.8 ms here, the node's own share included in both), and the worker makes this read before a payout signs again
// and to name a winner.
// Nothing is trusted for being JSON: the caller checks every field it uses (chain.ts parseOpAccountInfo).
// Failures are OncepayErrors with the RPC area's codes, and the answer is read as the indexer's RPC client reads it
// (common/json-rpc-answer.ts).
import * as http from 'http';
import * as https from 'https';
import { OncepayError, RPC_CODES } from '../../common/errors';
import { readJsonRpcAnswer } from '../../common/json-rpc-answer';

export interface JsonRpcOptions {
  /** The node's endpoint (an API key in its query string is kept). */
  url: string;
  /** Sent with every request (e.g. an Authorization header a provider wants). */
  headers?: Record<string, string>;
  /** A request whose connection stays silent this long fails (ms). */
  timeoutMs: number;
}

export type JsonRpcCall = (method: string, params: unknown[]) => Promise<unknown>;

/** A caller of one endpoint: resolves to the response's `result`, or fails (HTTP status, JSON-RPC error, timeout). */
export function jsonRpc(opts: JsonRpcOptions): JsonRpcCall {
  const url = new URL(opts.url);
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:')
    throw new OncepayError(RPC_CODES.INVALID_ENDPOINT, `JSON-RPC endpoint must be http(s), got ${url.protocol}`);
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const request = secure ? https.request : http.request;
  let nextId = 1;
  return (method, params) =>
    new Promise((resolve, reject) => {
      const fail = (
        code: (typeof RPC_CODES)[keyof typeof RPC_CODES],
        why: string,
        context: Record<string, unknown> = {},
      ) => reject(new OncepayError(code, `${method}: ${why}`, { method, ...context }));
      const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params });
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          timeout: opts.timeoutMs,
          headers: {
            ...opts.headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('error', (e) => fail(RPC_CODES.NETWORK, e.message));
          res.on('end', () => {
            if (res.statusCode !== 200)
              return fail(RPC_CODES.HTTP_STATUS, `HTTP ${res.statusCode}`, { status: res.statusCode });
            const answer = readJsonRpcAnswer(method, Buffer.concat(chunks).toString('utf8'));
            if (!answer.ok) return reject(new OncepayError(answer.code, answer.message, answer.context));
            resolve(answer.result);
          });
        },
      );
      // The connection silent for too long: the request is destroyed, and the call fails (the executor looks again).
      let timedOut = false;
      req.on('timeout', () => {
        timedOut = true;
        req.destroy();
      });
      req.on('error', (e) =>
        timedOut
          ? fail(RPC_CODES.TIMEOUT, `no response within ${opts.timeoutMs} ms`, { timeoutMs: opts.timeoutMs })
          : fail(RPC_CODES.NETWORK, e.message),
      );
      req.end(body);
    });
}
