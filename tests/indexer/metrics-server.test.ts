// The /metrics + /healthz + /readyz server every long-running command but the API and the webhook runs
// (indexer/metrics.ts serveMetrics): it takes no request body, so one announced — by Content-Length or chunked — is
// refused 413 before a byte of it is read and the connection closed; a GET is served as before.
import { expect } from 'chai';
import * as http from 'http';
import { Registry, Counter } from 'prom-client';
import { serveMetrics, MetricsServer } from '../../indexer/metrics';

/** One request whose body is announced but (for Content-Length) never sent: the answer must not wait for it. */
function request(
  url: string,
  o: { method: string; headers?: http.OutgoingHttpHeaders; chunk?: string },
): Promise<{ status: number; connection?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: o.method, headers: o.headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
    if (o.chunk !== undefined)
      req.write(o.chunk); // chunked: the rest never comes
    else if (o.headers?.['content-length'] === undefined) req.end();
    else req.flushHeaders();
  });
}

describe('indexer/metrics server: no request body is ever read', () => {
  let server: MetricsServer;
  before(async () => {
    const registry = new Registry();
    new Counter({ name: 'oncepay_test_total', help: 'a series to find', registers: [registry] }).inc();
    server = await serveMetrics({ port: 0, registry });
  });
  after(() => server.close());

  it('a body announced by Content-Length or chunked is refused 413 unread, the connection closed; GET /metrics still answers', async () => {
    for (const path of ['/metrics', '/healthz', '/anything']) {
      const announced = await request(server.url.replace('/metrics', path), {
        method: 'POST',
        headers: { 'content-length': String(64 * 1024 * 1024) },
      });
      expect([announced.status, announced.connection], `${path}, Content-Length`).to.deep.equal([413, 'close']);
      expect(JSON.parse(announced.body)).to.include({ code: 'BODY_TOO_LARGE' });
      const chunked = await request(server.url.replace('/metrics', path), {
        method: 'GET',
        headers: { 'transfer-encoding': 'chunked' },
        chunk: 'x'.repeat(1024),
      });
      expect([chunked.status, chunked.connection], `${path}, chunked`).to.deep.equal([413, 'close']);
    }
    const ok = await request(server.url, { method: 'GET' });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.match(/^oncepay_test_total 1$/m);
  });
});
