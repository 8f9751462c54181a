// A merchant's webhook endpoint for tests: a real HTTP server on 127.0.0.1, ephemeral port. It records every
// request and answers with the status the test scripts (default 200).
import * as http from 'http';
import { AddressInfo } from 'net';

export interface SeenRequest {
  idempotencyKey: string;
  signature: string;
  topic: string;
  body: string;
}

export interface MerchantServer {
  url: string;
  seen: SeenRequest[];
  /** Status for the n-th request (0-based); default 200. */
  respond: (n: number, req: SeenRequest) => number;
  close(): Promise<void>;
}

export async function startMerchantServer(
  respond: (n: number, req: SeenRequest) => number = () => 200,
): Promise<MerchantServer> {
  const seen: SeenRequest[] = [];
  const state = { respond };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: SeenRequest = {
        idempotencyKey: String(req.headers['idempotency-key'] ?? ''),
        signature: String(req.headers['x-oncepay-signature'] ?? ''),
        topic: String(req.headers['x-oncepay-topic'] ?? ''),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const status = state.respond(seen.length, r);
      seen.push(r);
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/oncepay`,
    seen,
    get respond() {
      return state.respond;
    },
    set respond(f) {
      state.respond = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
