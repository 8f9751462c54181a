// Every oncepay HTTP server answers an error alike (common/errors/http.ts): the merchant API and the webhook
// receiver send the same status for the same kind of refusal, the same content type, and a body of exactly
// { code, message } — only the codes differ (API_ERRORS vs ONCEPAY__WEBHOOK__*). Both apps on a real schema.
import { expect } from 'chai';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createTestDb, TestDb } from '../../testkit/test-db';
import { insertApiMerchant } from './helpers/api-merchant';
import { buildApiApp } from '../../app/api/build-api-app';
import { API_ERRORS } from '../../app/api/errors';
import { createLedger } from '../../indexer/ledger';
import { buildWebhookApp } from '../../indexer/source/webhook';
import { signDelivery } from '../../indexer/source/webhook-auth';
import { WEBHOOK_CODES } from '../../common/errors/codes';

const KEY = 'test-api-key-http-errors-00001';

describe('HTTP error answers: the merchant API and the webhook receiver share one shape', () => {
  let db: TestDb;
  let api: FastifyInstance;
  let webhook: FastifyInstance;

  before(async () => {
    db = await createTestDb('http_errors');
    await insertApiMerchant(db.pool, 'A', KEY);
    api = await buildApiApp({ db: db.pool, bodyLimit: 1024 });
    webhook = buildWebhookApp({
      db: db.pool,
      ledger: createLedger({ db: db.pool }),
      cluster: 'errors',
      secret: 'whsec-http-errors-0123456789',
      trustProvider: true,
      bodyLimit: 1024,
    });
    await webhook.ready();
  });
  after(async () => {
    await api?.close();
    await webhook?.close();
    await db?.drop();
  });

  const post = (app: FastifyInstance, url: string, payload: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });

  function expectSameShape(a: LightMyRequestResponse, w: LightMyRequestResponse, status: number) {
    expect([a.statusCode, w.statusCode], 'status').to.deep.equal([status, status]);
    expect(a.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(w.headers['content-type'], 'content type').to.equal(a.headers['content-type']);
    for (const r of [a, w]) {
      const body = r.json();
      expect(Object.keys(body), r.body).to.deep.equal(['code', 'message']);
      expect(body.code).to.be.a('string').and.not.equal('');
      expect(body.message).to.be.a('string').and.not.equal('');
    }
  }

  it('missing credentials: 401 UNAUTHORIZED / ONCEPAY__WEBHOOK__UNAUTHORIZED', async () => {
    const a = await post(api, '/v1/payouts', '{}', { 'idempotency-key': 'k-1' });
    const w = await post(webhook, '/v1/webhooks/helius', '[]');
    expectSameShape(a, w, 401);
    expect(a.json()).to.deep.equal({ code: 'UNAUTHORIZED', message: API_ERRORS.UNAUTHORIZED.message });
    expect(w.json()).to.deep.equal({
      code: WEBHOOK_CODES.UNAUTHORIZED,
      message: 'missing or wrong webhook credentials',
    });
  });

  it('an unknown route: 404 ROUTE_NOT_FOUND / ONCEPAY__WEBHOOK__NOT_FOUND', async () => {
    const a = await api.inject({ method: 'GET', url: '/nope' });
    const w = await webhook.inject({ method: 'GET', url: '/nope' });
    expectSameShape(a, w, 404);
    expect(a.json().code).to.equal('ROUTE_NOT_FOUND');
    expect(w.json()).to.deep.equal({ code: WEBHOOK_CODES.NOT_FOUND, message: 'no route GET /nope' });
  });

  it("a body over the limit (fastify's own refusal): 413 BODY_TOO_LARGE / ONCEPAY__WEBHOOK__BODY_TOO_LARGE", async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(4096) });
    const a = await post(api, '/v1/payouts', big, { authorization: `Bearer ${KEY}`, 'idempotency-key': 'k-2' });
    // Signed (the webhook refuses a request without credentials before its body: 401): the size alone decides.
    const w = await post(webhook, '/v1/webhooks/helius', big, {
      'x-oncepay-signature': signDelivery('whsec-http-errors-0123456789', big, Math.floor(Date.now() / 1000)),
    });
    expectSameShape(a, w, 413);
    expect(a.json().code).to.equal('BODY_TOO_LARGE');
    expect(w.json().code).to.equal(WEBHOOK_CODES.BODY_TOO_LARGE);
  });

  it('a request the route schema refuses: 400 BODY_INVALID / ONCEPAY__WEBHOOK__INVALID_REQUEST', async () => {
    const a = await post(api, '/v1/payouts', '"text"', { authorization: `Bearer ${KEY}`, 'idempotency-key': 'k-3' });
    const w = await post(webhook, '/v1/webhooks/Bad%20Provider', '[]');
    expectSameShape(a, w, 400);
    expect(a.json().code).to.equal('BODY_INVALID');
    expect(w.json().code).to.equal(WEBHOOK_CODES.INVALID_REQUEST);
  });
});
