// The webhook receiver through fastify's inject (no socket) on the real ledger and PostgreSQL, plus one run of
// the real `oncepay indexer webhook` process on loopback.
import { expect } from 'chai';
import { ChildProcess, spawn } from 'child_process';
import * as path from 'path';
import type { FastifyInstance } from 'fastify';
import { createTestDb, TestDb } from '../../helpers/db';
import { randomAddress, systemTransferTx, transferCheckedTx } from '../../helpers/replay-rpc';
import { createLedger } from '../../../indexer/ledger';
import { buildWebhookApp } from '../../../indexer/source/webhook';
import { signBody } from '../../../indexer/source/webhook-auth';
import { WEBHOOK_CODES } from '../../../indexer/source/codes';

const SECRET = 'whsec-test-0123456789';
const CLUSTER = 'wh';

/** A getTransaction-shaped item: a block entry plus slot and blockTime. */
function txItem(amount: bigint, to: { owner: string; mint: string }, slot = 500) {
  return { slot, blockTime: 1_780_000_500, ...transferCheckedTx({ amount, mint: to.mint, destinationOwner: to.owner }) };
}

describe('indexer/source webhook receiver', () => {
  let db: TestDb;
  let app: FastifyInstance;
  const payee = { owner: randomAddress(), mint: randomAddress() };

  before(async () => {
    db = await createTestDb('webhook');
    app = buildWebhookApp({ db: db.pool, ledger: createLedger({ db: db.pool }), cluster: CLUSTER, secret: SECRET });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await db.drop();
  });
  beforeEach(async () => {
    await db.pool.query('TRUNCATE invoices, receipts, exceptions, fulfilments, outbox, receipt_delivery_counts, webhook_events, webhook_dead_letters CASCADE');
  });

  async function count(table: string): Promise<number> {
    return (await db.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
  }
  async function credited(id: string): Promise<bigint> {
    return BigInt((await db.pool.query('SELECT credited_amount::text AS c FROM invoices WHERE id = $1', [id])).rows[0].c);
  }
  function post(body: string | Buffer, headers: Record<string, string> = { 'x-oncepay-secret': SECRET }, provider = 'helius') {
    return app.inject({ method: 'POST', url: `/v1/webhooks/${provider}`, headers: { 'content-type': 'application/json', ...headers }, payload: body });
  }

  it('the same delivery 20× (with an event id) credits once and answers 2xx every time, duplicate: true after the first', async () => {
    await createLedger({ db: db.pool }).createInvoice({ id: 'inv-20', mint: payee.mint, expectedAmount: 700n, depositAddress: payee.owner });
    const body = JSON.stringify([txItem(700n, payee)]);
    for (let k = 0; k < 20; k++) {
      const res = await post(body, { 'x-oncepay-secret': SECRET, 'webhook-id': 'evt-20' });
      expect(res.statusCode, res.body).to.equal(200);
      expect(res.json()).to.deep.include({ ok: true, duplicate: k > 0, eventId: 'evt-20' });
    }
    expect(await credited('inv-20')).to.equal(700n);
    expect(await count('receipts')).to.equal(1);
    expect(await count('exceptions')).to.equal(0);
    expect(await count('webhook_events')).to.equal(1);
  });

  it('20 concurrent copies of one delivery: all 2xx, exactly one applied, one credit', async () => {
    await createLedger({ db: db.pool }).createInvoice({ id: 'inv-conc', mint: payee.mint, expectedAmount: 900n, depositAddress: payee.owner });
    const body = JSON.stringify({ id: 'evt-conc', events: [txItem(400n, payee), txItem(500n, payee)] });
    const res = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    expect(res.map((r) => r.statusCode)).to.deep.equal(Array(20).fill(200));
    const inserted = res.reduce((a, r) => a + r.json().inserted, 0);
    expect(inserted).to.equal(2);
    expect(res.filter((r) => !r.json().duplicate).length).to.equal(1);
    expect(await credited('inv-conc')).to.equal(900n);
    expect(await count('receipts')).to.equal(2);
    expect(await count('exceptions')).to.equal(0);
    expect(await count('webhook_events')).to.equal(1);
  });

  it('the same delivery 20× without an event id still credits once (the ledger dedups), 2xx every time', async () => {
    await createLedger({ db: db.pool }).createInvoice({ id: 'inv-noid', mint: payee.mint, expectedAmount: 300n, depositAddress: payee.owner });
    const body = JSON.stringify(txItem(300n, payee));
    let duplicates = 0;
    for (let k = 0; k < 20; k++) {
      const res = await post(body, { 'x-oncepay-signature': signBody(SECRET, body) });
      expect(res.statusCode, res.body).to.equal(200);
      duplicates += res.json().duplicates;
    }
    expect(duplicates).to.equal(19);
    expect(await credited('inv-noid')).to.equal(300n);
    expect(await count('receipts')).to.equal(1);
    expect(await count('exceptions')).to.equal(0);
  });

  it('an event id reused with a different body is applied (flagged in the log), not dropped as a duplicate', async () => {
    await createLedger({ db: db.pool }).createInvoice({ id: 'inv-reuse', mint: payee.mint, expectedAmount: 30n, depositAddress: payee.owner });
    const first = await post(JSON.stringify([txItem(10n, payee)]), { 'x-oncepay-secret': SECRET, 'webhook-id': 'evt-reuse' });
    expect(first.json()).to.deep.include({ duplicate: false, inserted: 1 });
    const other = await post(JSON.stringify([txItem(20n, payee)]), { 'x-oncepay-secret': SECRET, 'webhook-id': 'evt-reuse' });
    expect(other.statusCode).to.equal(200);
    expect(other.json()).to.deep.include({ duplicate: false, inserted: 1 });
    expect(await credited('inv-reuse')).to.equal(30n);
    expect(await count('webhook_events')).to.equal(1);
  });

  it('a wrong secret is 401 and nothing is stored', async () => {
    const body = JSON.stringify([txItem(5n, payee)]);
    for (const headers of [{ 'x-oncepay-secret': 'wrong' }, { authorization: 'Bearer wrong' }, {} as Record<string, string>]) {
      const res = await post(body, { ...headers, 'webhook-id': 'evt-x' });
      expect(res.statusCode).to.equal(401);
      expect(res.json()).to.deep.equal({ code: WEBHOOK_CODES.UNAUTHORIZED, message: 'missing or wrong webhook credentials' });
    }
    // Even malformed bodies with bad credentials leave no trace.
    expect((await post('{"trunc', { 'x-oncepay-secret': 'wrong' })).statusCode).to.equal(401);
    for (const t of ['receipts', 'webhook_events', 'webhook_dead_letters']) expect(await count(t), t).to.equal(0);
  });

  it('a bad HMAC is 401 (also beside a right secret), a right one is accepted', async () => {
    const body = JSON.stringify([txItem(6n, payee)]);
    const tampered = JSON.stringify([txItem(7n, payee)]);
    expect((await post(body, { 'x-oncepay-signature': signBody(SECRET, tampered) })).statusCode).to.equal(401);
    expect((await post(body, { 'x-oncepay-signature': signBody('other-secret', body), 'x-oncepay-secret': SECRET })).statusCode).to.equal(401);
    expect(await count('receipts')).to.equal(0);
    const ok = await post(body, { 'x-oncepay-signature': signBody(SECRET, body) });
    expect(ok.statusCode).to.equal(200);
    expect(ok.json()).to.deep.include({ inserted: 1 });
  });

  it('an oversized body is 413 and nothing is stored', async () => {
    const big = JSON.stringify({ events: [txItem(1n, payee)], pad: 'x'.repeat(1024 * 1024) });
    const res = await post(big);
    expect(res.statusCode).to.equal(413);
    expect(res.json().code).to.equal(WEBHOOK_CODES.BODY_TOO_LARGE);
    for (const t of ['receipts', 'webhook_events', 'webhook_dead_letters']) expect(await count(t), t).to.equal(0);
  });

  it('truncated JSON is 400 with a reason code, and the raw body is kept as a dead letter', async () => {
    const whole = JSON.stringify([txItem(8n, payee)]);
    const truncated = whole.slice(0, Math.floor(whole.length / 2));
    const res = await post(truncated, { 'x-oncepay-secret': SECRET, 'x-oncepay-event-id': 'evt-trunc' });
    expect(res.statusCode).to.equal(400);
    expect(res.json()).to.deep.include({ code: WEBHOOK_CODES.MALFORMED_JSON, deadLettered: true });
    const { rows } = await db.pool.query('SELECT provider, event_id, item_index, reason, raw_body, received_at FROM webhook_dead_letters');
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({ provider: 'helius', event_id: 'evt-trunc', item_index: null, reason: WEBHOOK_CODES.MALFORMED_JSON });
    expect(Buffer.compare(rows[0].raw_body, Buffer.from(truncated))).to.equal(0);
    expect(rows[0].received_at).to.be.instanceOf(Date);
    // Not recorded as an event: the provider's full redelivery under the same id is applied.
    const again = await post(whole, { 'x-oncepay-secret': SECRET, 'x-oncepay-event-id': 'evt-trunc' });
    expect(again.json()).to.deep.include({ duplicate: false, inserted: 1 });
  });

  it('a mixed array: good items applied, the malformed one dead-lettered with its index and reason', async () => {
    await createLedger({ db: db.pool }).createInvoice({ id: 'inv-mixed', mint: payee.mint, expectedAmount: 30n, depositAddress: payee.owner });
    const bad = txItem(999n, payee) as { transaction: { signatures: string[] } };
    bad.transaction.signatures = ['short'];
    const items = [txItem(10n, payee), bad, { type: 'TRANSFER', description: 'an enhanced event' }, txItem(20n, payee)];
    const res = await post(JSON.stringify({ id: 'evt-mixed', events: items }));
    expect(res.statusCode, res.body).to.equal(200);
    const r = res.json();
    expect(r).to.deep.include({ transactions: 4, receipts: 2, inserted: 2, deadLettered: 2, eventId: 'evt-mixed' });
    expect(r.rejected.map((x: { index: number; code: string }) => [x.index, x.code])).to.deep.equal([
      [1, WEBHOOK_CODES.MALFORMED_TRANSACTION],
      [2, WEBHOOK_CODES.MALFORMED_TRANSACTION],
    ]);
    expect(await credited('inv-mixed')).to.equal(30n);
    const { rows } = await db.pool.query('SELECT item_index, reason, detail FROM webhook_dead_letters ORDER BY item_index');
    expect(rows.map((x) => x.item_index)).to.deep.equal([1, 2]);
    expect(rows[0].detail).to.include('ONCEPAY__DECODE__MALFORMED_TRANSACTION');
  });

  it('every item malformed is 400 with the reason, all kept; accepted shapes include a single transaction and SOL transfers', async () => {
    const res = await post(JSON.stringify([{ foo: 1 }, 42]));
    expect(res.statusCode).to.equal(400);
    expect(res.json()).to.deep.include({ code: WEBHOOK_CODES.MALFORMED_TRANSACTION, deadLettered: true });
    expect(await count('webhook_dead_letters')).to.equal(2);
    const sol = { slot: 9, blockTime: null, ...systemTransferTx({ lamports: 12345n }) };
    const one = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, result: sol }));
    expect(one.json()).to.deep.include({ transactions: 1, inserted: 1 });
    const shape = await post('"just a string"');
    expect(shape.json().code).to.equal(WEBHOOK_CODES.UNSUPPORTED_SHAPE);
  });

  it('answers /healthz, and unknown routes / bad providers with a code', async () => {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).to.deep.equal({ ok: true });
    const nf = await app.inject({ method: 'GET', url: '/nope' });
    expect(nf.statusCode).to.equal(404);
    expect(nf.json().code).to.equal(WEBHOOK_CODES.NOT_FOUND);
    const badProvider = await post('[]', { 'x-oncepay-secret': SECRET }, 'Bad%20Provider');
    expect(badProvider.statusCode).to.equal(400);
    expect(badProvider.json().code).to.equal(WEBHOOK_CODES.INVALID_REQUEST);
  });

  it('SIGKILL after the ledger commit but before the event is recorded: the redelivery credits nothing twice', async () => {
    await createLedger({ db: db.pool }).createInvoice({ id: 'inv-crash', mint: payee.mint, expectedAmount: 77n, depositAddress: payee.owner });
    const body = JSON.stringify([txItem(77n, payee)]);
    const headers = { 'content-type': 'application/json', 'x-oncepay-secret': SECRET, 'webhook-id': 'evt-crash' };
    const crashed = startWebhook({ ONCEPAY_FAILPOINT: 'webhook.after_apply' });
    const url = await crashed.address;
    const lost = await fetch(`${url}/v1/webhooks/p`, { method: 'POST', headers, body }).then(() => 'answered', () => 'no answer');
    expect(lost).to.equal('no answer');
    expect((await crashed.exited).signal).to.equal('SIGKILL');
    expect(await credited('inv-crash')).to.equal(77n);
    expect(await count('webhook_events')).to.equal(0);

    const again = startWebhook({});
    try {
      const res = await fetch(`${await again.address}/v1/webhooks/p`, { method: 'POST', headers, body });
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.include({ duplicate: false, inserted: 0, duplicates: 1 });
    } finally {
      again.child.kill('SIGTERM');
    }
    expect((await again.exited).code).to.equal(0);
    expect(await credited('inv-crash')).to.equal(77n);
    expect(await count('exceptions')).to.equal(0);
    expect(await count('webhook_events')).to.equal(1);
  });

  const children = new Set<ChildProcess>();
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  function startWebhook(env: Record<string, string>) {
    const child: ChildProcess = spawn(process.execPath, [path.resolve(__dirname, '../../../bin/oncepay'), 'indexer', 'webhook', '--port', '0', '--secret', SECRET, '--cluster', CLUSTER], {
      env: { ...process.env, ...db.env, ONCEPAY_FROM_SOURCE: '1', NODE_ENV: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal, stderr })),
    );
    const address = new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /"listening":"([^"]+)"/.exec(out);
        if (m) resolve(m[1]);
      });
      child.once('close', () => reject(new Error(`webhook exited early: ${stderr}`)));
    });
    return { child, exited, address };
  }

  it('`oncepay indexer webhook` serves deliveries and /metrics on loopback, and stops on SIGTERM', async () => {
    const server = startWebhook({});
    try {
      const address = await server.address;
      expect(address).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const body = JSON.stringify([txItem(42n, payee)]);
      const res = await fetch(`${address}/v1/webhooks/test`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-oncepay-signature': signBody(SECRET, body) }, body });
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.include({ inserted: 1 });
      const metrics = await (await fetch(`${address}/metrics`)).text();
      expect(metrics).to.match(/oncepay_webhook_deliveries_total\{provider="test",result="applied"\} 1/);
      expect(metrics).to.match(/oncepay_receipts_total\{cluster="wh",source="webhook"\} 1/);
    } finally {
      server.child.kill('SIGTERM');
    }
    const exit = await server.exited;
    expect(exit.code, exit.stderr).to.equal(0);
  });
});
