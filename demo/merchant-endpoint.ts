// The merchant's fulfilment endpoint, as a merchant would write it: verify the signature, apply each
// Idempotency-Key once, answer 2xx to a repeat. It keeps a log of every request it saw — the independent
// evidence the final table checks the outbox against. It fails the first request for one invoice on purpose; a
// chaos run (sim/chaos) makes it fail, or apply and lose its answer, as it is told.
import * as http from 'http';
import type { AddressInfo } from 'net';
import { verifySignature } from '../indexer/delivery';

export interface EndpointRequest {
  n: number;
  idempotencyKey: string | null;
  invoiceId: string | null;
  fulfilmentId: string | null;
  signatureValid: boolean;
  status: number;
  outcome: 'applied' | 'repeat' | 'injected-failure' | 'answer-lost' | 'refused';
}

/** A fault for the next request: answer 503 without applying, or apply it and drop the connection unanswered. */
export type EndpointFault = 'fail' | 'lose-answer';

export interface MerchantEndpoint {
  url: string;
  secret: string;
  requests: EndpointRequest[];
  /** Idempotency-Key → invoice id, for the keys the merchant applied (fulfilled) once. */
  applied: Map<string, string>;
  close(): Promise<void>;
}

export async function startMerchantEndpoint(opts: {
  secret: string;
  failFirstFor?: string;
  /** Asked for each well-formed request: a fault to play on it, or null. */
  fault?: () => EndpointFault | null;
}): Promise<MerchantEndpoint> {
  const requests: EndpointRequest[] = [];
  const applied = new Map<string, string>();
  let failed = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
      const sig = typeof req.headers['x-oncepay-signature'] === 'string' ? req.headers['x-oncepay-signature'] : '';
      const signatureValid = verifySignature(opts.secret, sig, body, { nowSeconds: Math.floor(Date.now() / 1000) });
      let payload: { invoiceId?: string; fulfilmentId?: string } = {};
      try {
        payload = JSON.parse(body);
      } catch {
        // refused below
      }
      const entry: EndpointRequest = {
        n: requests.length + 1,
        idempotencyKey: key,
        invoiceId: payload.invoiceId ?? null,
        fulfilmentId: payload.fulfilmentId ?? null,
        signatureValid,
        status: 0,
        outcome: 'refused',
      };
      const fault = !key || !signatureValid || !payload.invoiceId ? null : (opts.fault?.() ?? null);
      if (!key || !signatureValid || !payload.invoiceId) entry.status = 400;
      else if ((!failed && payload.invoiceId === opts.failFirstFor) || fault === 'fail') {
        if (payload.invoiceId === opts.failFirstFor) failed = true;
        entry.status = 503;
        entry.outcome = 'injected-failure';
      } else if (fault === 'lose-answer') {
        // Applied (once per key, as ever), then the connection drops before any answer: the sender cannot know.
        if (!applied.has(key)) applied.set(key, payload.invoiceId);
        entry.outcome = 'answer-lost';
        requests.push(entry);
        req.socket.destroy();
        return;
      } else if (applied.has(key)) {
        entry.status = 200;
        entry.outcome = 'repeat';
      } else {
        applied.set(key, payload.invoiceId);
        entry.status = 200;
        entry.outcome = 'applied';
      }
      requests.push(entry);
      res
        .writeHead(entry.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: entry.status === 200, outcome: entry.outcome }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/oncepay`,
    secret: opts.secret,
    requests,
    applied,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
