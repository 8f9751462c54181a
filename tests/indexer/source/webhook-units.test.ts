// The webhook app's units one by one (indexer/source/webhook-*.ts): answers and rows built without I/O, the error
// handlers and the gate on a bare fastify app, and hint intake on PostgreSQL. The whole app is tested in
// webhook.test.ts (against localnet), webhook-bounds.test.ts and webhook-junk.test.ts.
import { expect } from 'chai';
import bs58 from 'bs58';
import Fastify, { FastifyError, FastifyInstance } from 'fastify';
import { WEBHOOK_CODES } from '../../../common/errors/codes';
import { HttpError } from '../../../common/errors/http';
import { createLedger } from '../../../indexer/ledger';
import { createRpcClient } from '../../../indexer/rpc/client';
import type { SourceMetrics } from '../../../indexer/source/ports';
import { NO_METRICS } from '../../../indexer/source/ports';
import { signDelivery } from '../../../indexer/source/webhook-auth';
import { HINTS_RETRY_AFTER_S, installWebhookErrors, toWebhookHttpError } from '../../../indexer/source/webhook-errors';
import { webhookGate } from '../../../indexer/source/webhook-gate';
import { holdAndCheck, HoldDeps } from '../../../indexer/source/webhook-hold';
import { NO_WEBHOOK_METRICS } from '../../../indexer/source/webhook-metrics';
import { providerLabeler, UNKNOWN_PROVIDER } from '../../../indexer/source/webhook-providers';
import { deadLetterRows, Delivery, eventRecord } from '../../../indexer/source/webhook-records';
import { replyBody } from '../../../indexer/source/webhook-reply';
import { createChainVerifier } from '../../../indexer/source/webhook-verifier';
import { createTestDb, TestDb } from '../../../testkit/test-db';

const delivery = (over: Partial<Delivery> = {}): Delivery => ({
  provider: 'helius',
  bucket: 'helius',
  eventId: 'evt-1',
  raw: Buffer.from('{"transactions":[]}'),
  bodySha256: 'ab'.repeat(32),
  items: 3,
  reused: false,
  ...over,
});

/** Metrics that remember what was counted. */
const counting = () => {
  const counted: string[] = [];
  const metrics: SourceMetrics = { ...NO_METRICS, countWebhook: (p, r) => void counted.push(`${p}/${r}`) };
  return { counted, metrics };
};

describe('indexer/source webhook units (pure)', () => {
  it('a reply is ok with every count 0 but the ones given, and carries the event id, items and verified flag', () => {
    const r = replyBody({ eventId: null, transactions: 4, verified: false }, { credited: 2, pending: 1 });
    expect(r).to.deep.equal({
      ok: true,
      duplicate: false,
      eventId: null,
      transactions: 4,
      receipts: 0,
      inserted: 0,
      duplicates: 0,
      deadLettered: 0,
      rejected: [],
      verified: false,
      credited: 2,
      pending: 1,
      dropped: 0,
    });
  });

  it('a provider name is its own label only when configured; every other name is `unknown`', () => {
    const label = providerLabeler(['helius', 'triton']);
    expect(label('helius')).to.equal('helius');
    expect(label('triton')).to.equal('triton');
    expect(label('stranger')).to.equal(UNKNOWN_PROVIDER);
    expect(providerLabeler([])('helius')).to.equal(UNKNOWN_PROVIDER);
  });

  it('dead letters come one per refused item in index order, each with the raw body; the input is not reordered', () => {
    const d = delivery();
    const refused = [
      { index: 2, code: 'B', message: 'two' },
      { index: 0, code: 'A', message: 'zero' },
    ];
    const rows = deadLetterRows(d, refused);
    expect(rows.map((r) => [r.itemIndex, r.reason, r.detail])).to.deep.equal([
      [0, 'A', 'zero'],
      [2, 'B', 'two'],
    ]);
    expect(rows.every((r) => r.rawBody === d.raw && r.provider === 'helius' && r.eventId === 'evt-1')).to.equal(true);
    expect(refused[0].index).to.equal(2);
  });

  it('an event record is written only for a delivery with an event id that was not reused', () => {
    expect(eventRecord(delivery(), 1, 5, 4)).to.deep.equal({
      provider: 'helius',
      eventId: 'evt-1',
      bodySha256: 'ab'.repeat(32),
      transactions: 3,
      receipts: 5,
      inserted: 4,
      deadLettered: 1,
    });
    expect(eventRecord(delivery({ eventId: null }), 0, 0, 0)).to.equal(null);
    expect(eventRecord(delivery({ reused: true }), 0, 0, 0)).to.equal(null);
  });

  it("errors map to the webhook's codes: its own as they are, fastify's refusals by kind, a 5xx without its message", () => {
    const own = new HttpError(429, WEBHOOK_CODES.HINTS_OVER_CAPACITY, 'full');
    expect(toWebhookHttpError(own as unknown as FastifyError)).to.equal(own);
    const fastifyError = (code: string, statusCode: number, message = 'm') =>
      Object.assign(new Error(message), { code, statusCode }) as FastifyError;
    expect(toWebhookHttpError(fastifyError('FST_ERR_CTP_BODY_TOO_LARGE', 413)).code).to.equal(
      WEBHOOK_CODES.BODY_TOO_LARGE,
    );
    expect(toWebhookHttpError(fastifyError('FST_ERR_CTP_INVALID_MEDIA_TYPE', 415)).code).to.equal(
      WEBHOOK_CODES.UNSUPPORTED_MEDIA_TYPE,
    );
    const schema = Object.assign(fastifyError('FST_ERR_VALIDATION', 400), { validation: [] });
    expect(toWebhookHttpError(schema).code).to.equal(WEBHOOK_CODES.INVALID_REQUEST);
    const foreign4xx = toWebhookHttpError(fastifyError('ECLIENT', 400, 'bad thing'));
    expect([foreign4xx.status, foreign4xx.code, foreign4xx.message]).to.deep.equal([
      400,
      WEBHOOK_CODES.INVALID_REQUEST,
      'bad thing',
    ]);
    const crash = toWebhookHttpError(new Error('secret detail') as FastifyError);
    expect([crash.status, crash.code, crash.message]).to.deep.equal([500, WEBHOOK_CODES.INTERNAL, 'internal error']);
  });
});

describe('indexer/source webhook units on fastify (no database)', () => {
  const SECRET = 'whsec-units';
  let app: FastifyInstance;
  let counted: string[];
  let bodiesRead: number;

  beforeEach(async () => {
    const c = counting();
    counted = c.counted;
    bodiesRead = 0;
    app = Fastify({ logger: false });
    installWebhookErrors(app, { log: undefined, refusalLog: () => {} });
    const gate = webhookGate({
      auth: { secrets: [SECRET] },
      label: providerLabeler(['helius']),
      metrics: c.metrics,
      webhookMetrics: NO_WEBHOOK_METRICS,
      refusalLog: () => {},
    });
    app.post('/v1/webhooks/:provider', { onRequest: gate }, async (req) => {
      bodiesRead++;
      return { body: String(req.body) };
    });
    app.get('/boom', async () => {
      throw new Error('a secret detail');
    });
    app.get('/full', async () => {
      throw new HttpError(429, WEBHOOK_CODES.HINTS_OVER_CAPACITY, 'full');
    });
    await app.ready();
  });
  afterEach(() => app.close());

  it('the gate refuses a provider name outside the pattern with 400 and Connection: close, before the body', async () => {
    const r = await app.inject({ method: 'POST', url: '/v1/webhooks/BAD!', payload: 'x' });
    expect(r.statusCode).to.equal(400);
    expect(r.json().code).to.equal(WEBHOOK_CODES.INVALID_REQUEST);
    expect(r.headers.connection).to.equal('close');
    expect(counted).to.deep.equal([`${UNKNOWN_PROVIDER}/invalid_provider`]);
    expect(bodiesRead).to.equal(0);
  });

  it('the gate refuses missing credentials with 401 under the label, before the body; a signed request passes', async () => {
    const none = await app.inject({ method: 'POST', url: '/v1/webhooks/stranger', payload: 'x' });
    expect(none.statusCode).to.equal(401);
    expect(none.json().code).to.equal(WEBHOOK_CODES.UNAUTHORIZED);
    expect(none.headers.connection).to.equal('close');
    expect(counted).to.deep.equal([`${UNKNOWN_PROVIDER}/unauthorized`]);
    expect(bodiesRead).to.equal(0);
    const t = Math.floor(Date.now() / 1000);
    const ok = await app.inject({
      method: 'POST',
      url: '/v1/webhooks/helius',
      headers: { 'x-oncepay-signature': signDelivery(SECRET, 'x', t), 'content-type': 'text/plain' },
      payload: 'x',
    });
    expect(ok.statusCode).to.equal(200);
    expect(bodiesRead).to.equal(1);
  });

  it('the error handlers: a crash is 500 without its message, 429 carries Retry-After, an unknown route is 404', async () => {
    const boom = await app.inject({ method: 'GET', url: '/boom' });
    expect(boom.statusCode).to.equal(500);
    expect(boom.json()).to.deep.equal({ code: WEBHOOK_CODES.INTERNAL, message: 'internal error' });
    const full = await app.inject({ method: 'GET', url: '/full' });
    expect(full.statusCode).to.equal(429);
    expect(full.headers['retry-after']).to.equal(String(HINTS_RETRY_AFTER_S));
    const none = await app.inject({ method: 'GET', url: '/nowhere' });
    expect(none.statusCode).to.equal(404);
    expect(none.json().code).to.equal(WEBHOOK_CODES.NOT_FOUND);
  });
});

describe('indexer/source webhook hint intake (PostgreSQL)', function () {
  this.timeout(60_000);
  let db: TestDb;
  const CLUSTER = 'wh-units';
  const sig = (i: number) => bs58.encode(Buffer.alloc(64, i + 1));

  before(async () => {
    db = await createTestDb('webhook_units');
  });
  after(() => db?.drop());

  const deps = (maxPendingHints: number, metrics: SourceMetrics): HoldDeps => {
    const ledger = createLedger({ db: db.pool });
    // No node answers on this port: every check of a hint leaves it pending (the chain has not shown it yet).
    const rpc = createRpcClient({ url: 'http://127.0.0.1:9', retry: { attempts: 1 } });
    return {
      db: db.pool,
      cluster: CLUSTER,
      verifier: createChainVerifier({ db: db.pool, rpc, ledger, cluster: CLUSTER }),
      configured: ['helius'],
      maxPendingHints,
      inlineCheckMs: 200,
      metrics,
      webhookMetrics: NO_WEBHOOK_METRICS,
    };
  };
  const count = async (table: string) =>
    Number((await db.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n);

  it('a delivery past its bucket cap is 429 with nothing stored; within it, hints, dead letters and event commit together', async () => {
    const c = counting();
    const hints = [0, 1].map((i) => ({ signature: sig(i), claimed: null }));
    const refused = [{ index: 2, code: WEBHOOK_CODES.MALFORMED_TRANSACTION, message: 'no signature' }];
    const over = await holdAndCheck(deps(1, c.metrics), delivery(), hints, refused).catch((e: unknown) => e);
    expect(over).to.be.instanceOf(HttpError);
    expect((over as HttpError).status).to.equal(429);
    expect((over as HttpError).code).to.equal(WEBHOOK_CODES.HINTS_OVER_CAPACITY);
    expect(await count('webhook_hints')).to.equal(0);
    expect(await count('webhook_dead_letters')).to.equal(0);
    expect(await count('webhook_events')).to.equal(0);
    expect(c.counted).to.deep.equal(['helius/over_capacity']);

    const o = await holdAndCheck(deps(2, c.metrics), delivery(), hints, refused);
    expect([o.duplicate, o.credited, o.pending, o.dropped]).to.deep.equal([false, 0, 2, 0]);
    expect(await count('webhook_hints')).to.equal(2);
    expect(await count('webhook_dead_letters')).to.equal(1);
    expect(await count('webhook_events')).to.equal(1);
    expect(c.counted).to.deep.equal(['helius/over_capacity', 'helius/pending']);
  });
});
