// One /metrics for the whole demo process: the indexer's registry (ledger, sources, outbox) and prom-client's
// default registry (payout executor, merchant API), concatenated at scrape time so metrics created later appear.
import * as http from 'http';
import type { AddressInfo } from 'net';
import { register, Registry } from 'prom-client';

export async function serveDemoMetrics(registries: Registry[]): Promise<{ url: string; close(): Promise<void> }> {
  const all = [...registries, register];
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    Promise.all(all.map((r) => r.metrics())).then(
      (parts) =>
        res
          .writeHead(200, { 'content-type': register.contentType })
          .end(parts.filter((p) => p.trim() !== '').join('\n')),
      (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(e.message),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
