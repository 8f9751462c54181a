// Authentication is a property of the routes, never of URL strings (issue 10, item 2). Every path spelling an
// attacker can send — percent-encoded, doubled slashes, other case, dot segments, `;` parameters, trailing slashes,
// absolute-form targets — either reaches an authenticated route (401 without a key) or no route at all (404), and
// the answer is the same, byte for byte, for an existing payout id and a missing one. The requests go over a real
// socket with the request line exactly as written (light-my-request would normalise some of them first), and
// again through app.inject.
import { expect } from 'chai';
import { FastifyInstance } from 'fastify';
import * as net from 'net';
import { Keypair } from '@solana/web3.js';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { buildApiApp } from '../../../app/api/build-api-app';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { API_ERRORS } from '../../../app/api/errors';
import { insertMerchant } from '../../../app/merchant/store';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { address } from '../../../app/types';

const KEY = 'test-api-key-auth-merchant-0001';
const pk = () => address(Keypair.generate().publicKey);

interface RawResponse {
  status: number;
  body: string;
}

/** One HTTP/1.1 request with the request line exactly as given (no client-side normalisation). */
function rawRequest(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const lines = [
      `${method} ${target} HTTP/1.1`,
      'Host: localhost',
      'Connection: close',
      `Content-Length: ${Buffer.byteLength(body)}`,
    ];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    // write, not end: node's server aborts a request whose client half-closes before the answer.
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`));
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const head = text.slice(0, text.indexOf('\r\n\r\n'));
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      const chunked = /\r\ntransfer-encoding: chunked/i.test(head);
      let rest = text.slice(head.length + 4);
      if (chunked) {
        let out = '';
        for (;;) {
          const nl = rest.indexOf('\r\n');
          const size = parseInt(rest.slice(0, nl), 16);
          if (!size) break;
          out += rest.slice(nl + 2, nl + 2 + size);
          rest = rest.slice(nl + 2 + size + 2);
        }
        rest = out;
      }
      resolve({ status, body: rest });
    });
  });
}

/** Path spellings of GET /v1/payouts/:id for a given id. */
const GET_VARIANTS: Array<[string, (id: string) => string]> = [
  ['canonical', (id) => `/v1/payouts/${id}`],
  ['percent-encoded prefix', (id) => `/%76%31/payouts/${id}`],
  ['percent-encoded segment', (id) => `/v1/pay%6Fouts/${id}`],
  [
    'percent-encoded everything',
    (id) => `/%76%31/%70%61%79%6f%75%74%73/${[...id].map((c) => '%' + c.charCodeAt(0).toString(16)).join('')}`,
  ],
  ['double-encoded', (id) => `/%2576%2531/payouts/${id}`],
  ['doubled slash in the middle', (id) => `/v1//payouts/${id}`],
  ['doubled leading slash', (id) => `//v1/payouts/${id}`],
  ['upper-case prefix', (id) => `/V1/payouts/${id}`],
  ['upper-case segment', (id) => `/v1/PAYOUTS/${id}`],
  ['dot-dot segment', (id) => `/v1/../v1/payouts/${id}`],
  ['dot segment', (id) => `/v1/./payouts/${id}`],
  ['leading dot segment', (id) => `/./v1/payouts/${id}`],
  ['encoded dot-dot segment', (id) => `/x/%2e%2e/v1/payouts/${id}`],
  ['encoded slash in the id', (id) => `/%76%31/payouts/..%2F${id}`],
  ['`;` parameter on the id', (id) => `/v1/payouts/${id};x=1`],
  ['`;` parameter on a segment', (id) => `/v1;x=1/payouts/${id}`],
  ['encoded `;` parameter', (id) => `/%76%31/payouts/${id}%3Bx=1`],
  ['trailing slash', (id) => `/v1/payouts/${id}/`],
  ['encoded prefix and trailing slash', (id) => `/%76%31/payouts/${id}/`],
  ['query string', (id) => `/%76%31/payouts/${id}?a=1`],
  ['absolute-form target', (id) => `http://localhost/v1/payouts/${id}`],
  ['absolute-form, encoded', (id) => `http://localhost/%76%31/payouts/${id}`],
];

const POST_VARIANTS: string[] = [
  '/v1/payouts',
  '/%76%31/payouts',
  '/%76%31/%70%61%79%6f%75%74%73',
  '/v1//payouts',
  '//v1/payouts',
  '/V1/payouts',
  '/v1/../v1/payouts',
  '/v1/./payouts',
  '/v1/payouts;x=1',
  '/%76%31/payouts;x=1',
  '/v1/payouts/',
  '/%76%31/payouts/',
  '/%76%31/payouts?x=1',
  'http://localhost/%76%31/payouts',
];

/** Credentials that must not authenticate. */
const BAD_AUTH: Array<Record<string, string>> = [
  {},
  { authorization: '' },
  { authorization: 'Bearer' },
  { authorization: 'Bearer ' },
  { authorization: `Basic ${Buffer.from(`x:${KEY}`).toString('base64')}` },
  { authorization: 'Bearer not-the-key-of-any-merchant-1' },
  { authorization: `Bearer ${KEY.toUpperCase()}` },
  { authorization: `Bearer ${KEY}x` },
  { authorization: `Bearer${KEY}` },
];

describe('app/api authentication follows the routes, not the URL string', () => {
  let db: TestDb;
  let app: FastifyInstance;
  let port: number;
  let existing: string;
  const missing = '999999999';
  const recipient = pk();
  const mint = pk();

  const payoutCount = async () => Number((await db.pool.query('SELECT count(*) AS n FROM payouts')).rows[0].n);

  before(async () => {
    db = await createTestDb('app_api_auth');
    await insertMerchant(db.pool, {
      name: 'A',
      apiKeyHash: hashApiKey(KEY),
      programId: address(ONCEPAY_PROGRAM_ID),
      merchantAddress: pk(),
      vault: pk(),
    });
    app = await buildApiApp({ db: db.pool });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as net.AddressInfo).port;
    const r = await app.inject({
      method: 'POST',
      url: '/v1/payouts',
      headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': 'seed', 'content-type': 'application/json' },
      payload: { payoutId: 'seed', recipient, mint, amount: '10' },
    });
    expect(r.statusCode, r.body).to.equal(201);
    existing = r.json().id;
    expect(
      (await app.inject({ method: 'GET', url: `/v1/payouts/${missing}`, headers: { authorization: `Bearer ${KEY}` } }))
        .statusCode,
    ).to.equal(404);
  });
  after(async () => {
    await app?.close();
    await db?.drop();
  });

  const expectRefused = (r: RawResponse, what: string) => {
    expect([401, 404], `${what}: ${r.status} ${r.body}`).to.include(r.status);
    if (r.body !== '') {
      const code = JSON.parse(r.body).code;
      expect(code, what).to.equal(r.status === 401 ? 'UNAUTHORIZED' : 'ROUTE_NOT_FOUND');
    }
  };

  for (const method of ['GET', 'HEAD']) {
    for (const [what, path] of GET_VARIANTS) {
      it(`${method} ${what} (${path(':id')}) without valid credentials: 401/404, the same for an existing and a missing id`, async () => {
        for (const headers of BAD_AUTH) {
          const label = `${method} ${path(existing)} ${JSON.stringify(headers)}`;
          const onExisting = await rawRequest(port, method, path(existing), headers);
          const onMissing = await rawRequest(port, method, path(missing), headers);
          expectRefused(onExisting, label);
          expect(onMissing, label).to.deep.equal(onExisting);
          const injected = await app.inject({ method: method as 'GET', url: path(existing), headers });
          const injectedMissing = await app.inject({ method: method as 'GET', url: path(missing), headers });
          expectRefused({ status: injected.statusCode, body: injected.body }, `inject ${label}`);
          expect({ s: injectedMissing.statusCode, b: injectedMissing.body }, `inject ${label}`).to.deep.equal({
            s: injected.statusCode,
            b: injected.body,
          });
        }
      });
    }
  }

  it('the canonical GET without a key is exactly 401 UNAUTHORIZED (the refusal above is the auth, not a missing route)', async () => {
    const r = await rawRequest(port, 'GET', `/v1/payouts/${existing}`);
    expect(r.status).to.equal(401);
    expect(JSON.parse(r.body)).to.deep.equal({ code: 'UNAUTHORIZED', message: API_ERRORS.UNAUTHORIZED.message });
  });

  it('POST variants without valid credentials: 401/404 and nothing stored', async () => {
    const before = await payoutCount();
    const body = JSON.stringify({ payoutId: 'attacker', recipient, mint, amount: '1000000' });
    for (const target of POST_VARIANTS) {
      for (const headers of BAD_AUTH) {
        const h = { ...headers, 'content-type': 'application/json', 'idempotency-key': `atk-${Math.random()}` };
        expectRefused(await rawRequest(port, 'POST', target, h, body), `POST ${target} ${JSON.stringify(headers)}`);
        const injected = await app.inject({ method: 'POST', url: target, headers: h, payload: body });
        expectRefused(
          { status: injected.statusCode, body: injected.body },
          `inject POST ${target} ${JSON.stringify(headers)}`,
        );
      }
    }
    expect(await payoutCount()).to.equal(before);
    const { rowCount } = await db.pool.query(`SELECT 1 FROM idempotency_keys WHERE key LIKE 'atk-%'`);
    expect(rowCount).to.equal(0);
  });

  it('the Bearer scheme is case-insensitive (RFC 9110 §11.1); the key itself is not', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const r = await rawRequest(port, 'GET', `/v1/payouts/${existing}`, { authorization: `${scheme} ${KEY}` });
      expect(r.status, scheme).to.equal(200);
      expect(JSON.parse(r.body).id).to.equal(existing);
    }
    const wrongCase = await rawRequest(port, 'GET', `/v1/payouts/${existing}`, {
      authorization: `bearer ${KEY.toUpperCase()}`,
    });
    expect(wrongCase.status).to.equal(401);
  });

  it('a valid key reaches the route through any spelling fastify routes to it, and sees only its own ids', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const ok = await rawRequest(port, 'GET', `/%76%31/payouts/${existing}`, auth);
    expect(ok.status).to.equal(200);
    expect(JSON.parse(ok.body).id).to.equal(existing);
    const miss = await rawRequest(port, 'GET', `/%76%31/payouts/${missing}`, auth);
    expect(miss.status).to.equal(404);
    expect(JSON.parse(miss.body).code).to.equal('PAYOUT_NOT_FOUND');
  });

  it('public routes stay public: /openapi.json, /metrics, /healthz and /readyz answer without a key', async () => {
    for (const p of ['/openapi.json', '/metrics', '/healthz', '/readyz'])
      expect((await rawRequest(port, 'GET', p)).status, p).to.equal(200);
  });

  describe('non-JSON bodies → 415 CONTENT_TYPE_UNSUPPORTED (as /openapi.json documents)', () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const cases: Array<[string, Record<string, string>, string]> = [
      ['text/plain', { 'content-type': 'text/plain' }, '{"payoutId":"t1"}'],
      ['text/plain; charset=utf-8', { 'content-type': 'text/plain; charset=utf-8' }, 'payoutId=t2'],
      ['form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 'payoutId=t3&amount=1'],
      ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }, '--x\r\n\r\n--x--'],
      ['application/xml', { 'content-type': 'application/xml' }, '<p/>'],
      ['application/jsonx', { 'content-type': 'application/jsonx' }, '{}'],
      ['no content type', {}, '{"payoutId":"t4"}'],
    ];
    cases.forEach(([what, ct, body], i) => {
      it(`${what} → 415 with the stable code, nothing stored, key not burnt`, async () => {
        const before = await payoutCount();
        const r = await rawRequest(port, 'POST', '/v1/payouts', { ...auth, ...ct, 'idempotency-key': `ct-${i}` }, body);
        expect(r.status, r.body).to.equal(415);
        expect(JSON.parse(r.body)).to.deep.equal({
          code: 'CONTENT_TYPE_UNSUPPORTED',
          message: API_ERRORS.CONTENT_TYPE_UNSUPPORTED.message,
        });
        expect(await payoutCount()).to.equal(before);
      });
    });

    it('application/json with a charset parameter is JSON', async () => {
      const r = await rawRequest(
        port,
        'POST',
        '/v1/payouts',
        { ...auth, 'content-type': 'application/json; charset=utf-8', 'idempotency-key': 'ct-json-charset' },
        JSON.stringify({ payoutId: 'ct-json', recipient, mint, amount: '1' }),
      );
      expect(r.status, r.body).to.equal(201);
    });

    it('the OpenAPI document lists 415 with the error shape and application/json as the only request type', async () => {
      const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const op = doc.paths['/v1/payouts'].post;
      expect(Object.keys(op.requestBody.content)).to.deep.equal(['application/json']);
      expect(op.responses['415'].description).to.match(/application\/json/);
      expect(op.responses['415'].content['application/json'].schema.$ref).to.match(/ApiError$/);
      expect(op.responses['401'].description).to.match(/Bearer/);
    });
  });
});
