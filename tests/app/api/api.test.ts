import { expect } from 'chai';
import { FastifyInstance } from 'fastify';
import { Keypair } from '@solana/web3.js';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { buildApiApp } from '../../../app/api/build-api-app';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { API_ERRORS } from '../../../app/api/errors';
import { pruneIdempotencyKeys } from '../../../app/api/idempotency';
import { insertMerchant, MerchantRow } from '../../../app/merchant/store';
import { deriveOpId } from '../../../app/op-id';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { address } from '../../../app/types';

const KEY_A = 'test-api-key-merchant-a-000001';
const KEY_B = 'test-api-key-merchant-b-000002';
const pk = () => address(Keypair.generate().publicKey);

describe('app/api (merchant API, real PostgreSQL)', () => {
  let db: TestDb;
  let app: FastifyInstance;
  let a: MerchantRow;
  let b: MerchantRow;
  const recipient = pk();
  const mint = pk();

  before(async () => {
    db = await createTestDb('app_api');
    a = await insertMerchant(db.pool, {
      name: 'A',
      apiKeyHash: hashApiKey(KEY_A),
      programId: address(ONCEPAY_PROGRAM_ID),
      merchantAddress: pk(),
      vault: pk(),
    });
    b = await insertMerchant(db.pool, {
      name: 'B',
      apiKeyHash: hashApiKey(KEY_B),
      programId: address(ONCEPAY_PROGRAM_ID),
      merchantAddress: pk(),
      vault: pk(),
    });
    app = await buildApiApp({ db: db.pool, idempotencyStaleMs: 60_000 });
  });
  after(async () => {
    await app?.close();
    await db?.drop();
  });

  const post = (body: unknown, headers: Record<string, string> = {}, apiKey = KEY_A) =>
    app.inject({
      method: 'POST',
      url: '/v1/payouts',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const count = async (where = 'true', values: unknown[] = []) =>
    Number((await db.pool.query(`SELECT count(*) AS n FROM payouts WHERE ${where}`, values)).rows[0].n);

  it('refuses a request without Idempotency-Key (400 IDEMPOTENCY_KEY_MISSING), even with a bad body; nothing stored', async () => {
    const r = await post({ payoutId: 'p-nokey', recipient, mint, amount: '10' });
    expect(r.statusCode).to.equal(400);
    expect(r.json()).to.deep.equal({
      code: 'IDEMPOTENCY_KEY_MISSING',
      message: API_ERRORS.IDEMPOTENCY_KEY_MISSING.message,
    });
    const r2 = await post({ amount: 12 });
    expect(r2.json().code).to.equal('IDEMPOTENCY_KEY_MISSING');
    expect(await count()).to.equal(0);
  });

  it('refuses a missing or unknown API key (401 UNAUTHORIZED)', async () => {
    const r = await app.inject({
      method: 'POST',
      url: '/v1/payouts',
      headers: { 'idempotency-key': 'k' },
      payload: {},
    });
    expect(r.statusCode).to.equal(401);
    expect(r.json().code).to.equal('UNAUTHORIZED');
    const r2 = await post(
      { payoutId: 'x', recipient, mint, amount: '1' },
      { 'idempotency-key': 'k' },
      'not-a-real-key-of-anyone-123',
    );
    expect(r2.statusCode).to.equal(401);
  });

  it('creates a payout (201) whose op_id derives from the merchant and the payout id', async () => {
    const r = await post({ payoutId: 'payout-1', recipient, mint, amount: '1500' }, { 'idempotency-key': 'key-1' });
    expect(r.statusCode).to.equal(201);
    const body = r.json();
    expect(body).to.include({ payoutId: 'payout-1', state: 'pending', amount: '1500', recipient, mint });
    expect(body.opId).to.equal(
      deriveOpId({ programId: ONCEPAY_PROGRAM_ID, merchant: a.merchantAddress, payoutId: 'payout-1' }),
    );
    expect(body.attempts).to.deep.equal([]);
    // Stored, not executed: the worker pool (`oncepay payout worker`) claims it from the table.
    const stored = await db.pool.query(`SELECT id::text, state FROM payouts WHERE merchant_payout_id = 'payout-1'`);
    expect(stored.rows).to.deep.equal([{ id: body.id, state: 'pending' }]);
  });

  it('same key + same canonical body → the original status and body (incl. id), nothing new', async () => {
    const first = await post({ payoutId: 'payout-2', recipient, mint, amount: '7' }, { 'idempotency-key': 'key-2' });
    // Same meaning, other key order and spacing: the canonical hash is the same.
    const again = await post(`{ "amount":"7",  "mint":"${mint}", "recipient":"${recipient}", "payoutId":"payout-2" }`, {
      'idempotency-key': 'key-2',
    });
    expect(again.statusCode).to.equal(201);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.json()).to.deep.equal(first.json());
    expect(await count(`merchant_payout_id = 'payout-2'`)).to.equal(1);
  });

  it('same key + different body → 409 IDEMPOTENCY_CONFLICT and no effect', async () => {
    await post({ payoutId: 'payout-3', recipient, mint, amount: '100' }, { 'idempotency-key': 'key-3' });
    const r = await post({ payoutId: 'payout-3', recipient, mint, amount: '999' }, { 'idempotency-key': 'key-3' });
    expect(r.statusCode).to.equal(409);
    expect(r.json().code).to.equal('IDEMPOTENCY_CONFLICT');
    const r2 = await post({ payoutId: 'payout-3b', recipient, mint, amount: '100' }, { 'idempotency-key': 'key-3' });
    expect(r2.json().code).to.equal('IDEMPOTENCY_CONFLICT');
    const { rows } = await db.pool.query(`SELECT amount::text FROM payouts WHERE merchant_payout_id LIKE 'payout-3%'`);
    expect(rows).to.deep.equal([{ amount: '100' }]);
  });

  it('same key while the first request is in flight → 409 IDEMPOTENCY_IN_PROGRESS; then the original response', async () => {
    // Hold the payouts table so the first request stops between claiming its key and inserting its payout.
    const blocker = await db.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE payouts IN EXCLUSIVE MODE');
    const body = { payoutId: 'payout-4', recipient, mint, amount: '5' };
    const first = post(body, { 'idempotency-key': 'key-4' });
    try {
      for (let i = 0; ; i++) {
        const { rowCount } = await db.pool.query(
          `SELECT 1 FROM idempotency_keys WHERE key = 'key-4' AND state = 'in_flight'`,
        );
        if (rowCount) break;
        if (i > 2000) throw new Error('first request never claimed its key');
        await new Promise((r) => setTimeout(r, 5));
      }
      const second = await post(body, { 'idempotency-key': 'key-4' });
      expect(second.statusCode).to.equal(409);
      expect(second.json().code).to.equal('IDEMPOTENCY_IN_PROGRESS');
      const other = await post({ ...body, amount: '6' }, { 'idempotency-key': 'key-4' });
      expect(other.json().code).to.equal('IDEMPOTENCY_CONFLICT');
    } finally {
      await blocker.query('COMMIT');
      blocker.release();
    }
    const r1 = await first;
    expect(r1.statusCode).to.equal(201);
    const r3 = await post(body, { 'idempotency-key': 'key-4' });
    expect(r3.statusCode).to.equal(201);
    expect(r3.json().id).to.equal(r1.json().id);
    expect(await count(`merchant_payout_id = 'payout-4'`)).to.equal(1);
  });

  it('a stale in-flight claim (its process died) is taken over by the retry', async () => {
    const body = { payoutId: 'payout-5', recipient, mint, amount: '5' };
    // Hash of the same canonical request, written as a dead process would have left it.
    const { canonicalRequestHash } = await import('../../../app/api/idempotency');
    const hash = canonicalRequestHash('POST', '/v1/payouts', body);
    await db.pool.query(
      `INSERT INTO idempotency_keys (merchant_id, key, request_hash, state, locked_at) VALUES ($1, 'key-5', $2, 'in_flight', now() - interval '10 minutes')`,
      [a.id, hash],
    );
    const r = await post(body, { 'idempotency-key': 'key-5' });
    expect(r.statusCode).to.equal(201);
    expect(await count(`merchant_payout_id = 'payout-5'`)).to.equal(1);
  });

  it('keys are scoped per merchant: the same key and body from another merchant is its own payout', async () => {
    const body = { payoutId: 'payout-1', recipient, mint, amount: '1500' };
    const ra = await post(body, { 'idempotency-key': 'key-1' });
    const rb = await post(body, { 'idempotency-key': 'key-1' }, KEY_B);
    expect(rb.statusCode).to.equal(201);
    expect(rb.headers['idempotent-replayed']).to.equal(undefined);
    expect(rb.json().id).to.not.equal(ra.json().id);
    expect(rb.json().opId).to.equal(
      deriveOpId({ programId: ONCEPAY_PROGRAM_ID, merchant: b.merchantAddress, payoutId: 'payout-1' }),
    );
    expect(rb.json().opId).to.not.equal(ra.json().opId);
    // Each merchant sees only its own payout.
    const getB = await app.inject({
      method: 'GET',
      url: `/v1/payouts/${ra.json().id}`,
      headers: { authorization: `Bearer ${KEY_B}` },
    });
    expect(getB.statusCode).to.equal(404);
    expect(getB.json().code).to.equal('PAYOUT_NOT_FOUND');
  });

  it('a second key for an existing payoutId → 409 PAYOUT_ID_EXISTS (stored: replays as 409), never a second payout', async () => {
    const r = await post(
      { payoutId: 'payout-1', recipient, mint, amount: '1500' },
      { 'idempotency-key': 'key-1-other' },
    );
    expect(r.statusCode).to.equal(409);
    expect(r.json().code).to.equal('PAYOUT_ID_EXISTS');
    const again = await post(
      { payoutId: 'payout-1', recipient, mint, amount: '1500' },
      { 'idempotency-key': 'key-1-other' },
    );
    expect(again.statusCode).to.equal(409);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(await count(`merchant_payout_id = 'payout-1' AND merchant_id = $1`, [a.id])).to.equal(1);
  });

  const bad: Array<[string, unknown, string]> = [
    ['invalid JSON', '{"payoutId": "x", ', 'BODY_MALFORMED'],
    ['a JSON array', '[]', 'BODY_INVALID'],
    ['amount as a JSON number', { payoutId: 'm1', recipient, mint, amount: 100 }, 'AMOUNT_MALFORMED'],
    ['amount with decimals', { payoutId: 'm2', recipient, mint, amount: '1.5' }, 'AMOUNT_MALFORMED'],
    ['negative amount', { payoutId: 'm3', recipient, mint, amount: '-1' }, 'AMOUNT_MALFORMED'],
    ['amount with an exponent', { payoutId: 'm4', recipient, mint, amount: '1e3' }, 'AMOUNT_MALFORMED'],
    ['amount with leading zeros', { payoutId: 'm5', recipient, mint, amount: '007' }, 'AMOUNT_MALFORMED'],
    ['amount zero (the program refuses it)', { payoutId: 'm0', recipient, mint, amount: '0' }, 'AMOUNT_ZERO'],
    [
      'amount = u64::MAX + 1',
      { payoutId: 'm6', recipient, mint, amount: '18446744073709551616' },
      'AMOUNT_OUT_OF_RANGE',
    ],
    ['amount far beyond u64', { payoutId: 'm7', recipient, mint, amount: '9'.repeat(40) }, 'AMOUNT_OUT_OF_RANGE'],
    ['missing amount', { payoutId: 'm8', recipient, mint }, 'BODY_INVALID'],
    ['unknown field', { payoutId: 'm9', recipient, mint, amount: '1', memo: 'x' }, 'BODY_INVALID'],
    ['recipient not an address', { payoutId: 'm10', recipient: 'abc', mint, amount: '1' }, 'ADDRESS_MALFORMED'],
    [
      'payout id with a control character',
      { payoutId: 'a\u0007b', recipient, mint, amount: '1' },
      'PAYOUT_ID_MALFORMED',
    ],
    ['payout id of 201 bytes', { payoutId: 'x'.repeat(201), recipient, mint, amount: '1' }, 'PAYOUT_ID_MALFORMED'],
  ];
  bad.forEach(([what, body, code], i) => {
    it(`malformed: ${what} → 400 ${code}, nothing stored`, async () => {
      const before = await count();
      const r = await post(body as object, { 'idempotency-key': `bad-${i}` });
      expect(r.statusCode, r.body).to.equal(400);
      expect(r.json().code).to.equal(code);
      expect(Object.keys(r.json()).sort()).to.deep.equal(['code', 'message']);
      expect(await count()).to.equal(before);
    });
  });

  it('a refused body does not burn its key: the corrected request under the same key succeeds', async () => {
    const key = 'key-fixed-later';
    const r1 = await post(
      { payoutId: 'payout-6', recipient, mint, amount: '18446744073709551616' },
      { 'idempotency-key': key },
    );
    expect(r1.json().code).to.equal('AMOUNT_OUT_OF_RANGE');
    const r2 = await post(
      { payoutId: 'payout-6', recipient, mint, amount: '18446744073709551615' },
      { 'idempotency-key': key },
    );
    expect(r2.statusCode).to.equal(201);
    expect(r2.json().amount).to.equal('18446744073709551615');
    const { rows } = await db.pool.query(`SELECT amount::text FROM payouts WHERE merchant_payout_id = 'payout-6'`);
    expect(rows[0].amount).to.equal('18446744073709551615');
  });

  it('refuses a malformed Idempotency-Key and a non-JSON content type', async () => {
    const r = await post({ payoutId: 'k', recipient, mint, amount: '1' }, { 'idempotency-key': 'has space' });
    expect(r.statusCode).to.equal(400);
    expect(r.json().code).to.equal('IDEMPOTENCY_KEY_MALFORMED');
    const r2 = await post('payoutId=x', {
      'idempotency-key': 'ct',
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(r2.statusCode).to.equal(415);
    expect(r2.json().code).to.equal('CONTENT_TYPE_UNSUPPORTED');
  });

  it('GET /v1/payouts/:id shows the payout, its attempts and proof; unknown ids are 404', async () => {
    const c = await post({ payoutId: 'payout-7', recipient, mint, amount: '3' }, { 'idempotency-key': 'key-7' });
    const g = await app.inject({
      method: 'GET',
      url: `/v1/payouts/${c.json().id}`,
      headers: { authorization: `Bearer ${KEY_A}` },
    });
    expect(g.statusCode).to.equal(200);
    expect(g.json()).to.deep.equal(c.json());
    expect(g.json()).to.have.property('proof', null);
    for (const id of ['999999999', 'abc', '1;DROP TABLE payouts']) {
      const r = await app.inject({
        method: 'GET',
        url: `/v1/payouts/${encodeURIComponent(id)}`,
        headers: { authorization: `Bearer ${KEY_A}` },
      });
      expect(r.statusCode).to.equal(404);
      expect(r.json().code).to.equal('PAYOUT_NOT_FOUND');
    }
  });

  it('serves an OpenAPI document generated from the route schemas', async () => {
    const r = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(r.statusCode).to.equal(200);
    const doc = r.json();
    expect(doc.openapi).to.match(/^3\./);
    const post = doc.paths['/v1/payouts'].post;
    expect(post.requestBody.content['application/json'].schema.required).to.include.members(['payoutId', 'amount']);
    expect(post.parameters.find((p: { name: string }) => p.name === 'idempotency-key')).to.include({
      in: 'header',
      required: true,
    });
    expect(Object.keys(post.responses)).to.include.members(['201', '400', '401', '409']);
    expect(doc.paths['/v1/payouts/{id}'].get.responses['200']).to.be.an('object');
    expect(doc.paths['/openapi.json']).to.equal(undefined);
  });

  it('keeps idempotency keys at least 24 h', async () => {
    let err: unknown;
    try {
      await pruneIdempotencyKeys(db.pool, 3600_000);
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string }).code).to.equal('ONCEPAY__API__IDEMPOTENCY_RETENTION_TOO_SHORT');
    const before = Number((await db.pool.query('SELECT count(*) AS n FROM idempotency_keys')).rows[0].n);
    await db.pool.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'key-7'`);
    expect(await pruneIdempotencyKeys(db.pool)).to.equal(1);
    const after = Number((await db.pool.query('SELECT count(*) AS n FROM idempotency_keys')).rows[0].n);
    expect(after).to.equal(before - 1);
  });
});
