// The webhook receiver on the real ledger and PostgreSQL, against a real node (`oncepay localnet`): deliveries are
// hints, every signature is verified with getTransaction before anything is credited. Through fastify's inject (no
// socket) and as the real `oncepay indexer webhook` process on loopback.
import { expect } from 'chai';
import { ChildProcess, spawn } from 'child_process';
import * as path from 'path';
import { randomBytes } from 'crypto';
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { createLedger } from '../../../indexer/ledger';
import { buildWebhookApp, WebhookAppOptions } from '../../../indexer/source/webhook';
import { signBodyLegacy, signDelivery } from '../../../indexer/source/webhook-auth';
import { createWebhookMetrics } from '../../../indexer/source/webhook-metrics';
import { ChainVerifier, createChainVerifier } from '../../../indexer/source/webhook-verifier';
import { WEBHOOK_CODES } from '../../../common/errors/codes';
import { API_ERRORS } from '../../../app/api/errors';
import { Payee, startWebhookChain, WebhookChain } from './webhook-chain';
import { scaledWait } from '../../../testkit/node';

const SECRET = 'whsec-test-0123456789';
const CLUSTER = 'wh';
const now = () => Math.floor(Date.now() / 1000);
const signed = (body: string | Buffer, t = now()) => ({ 'x-oncepay-signature': signDelivery(SECRET, body, t) });

// Provider payloads built and edited field by field; a wrong path fails the assertion that follows.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type Json = Record<string, any>;

describe('indexer/source webhook receiver (verified against localnet)', () => {
  let db: TestDb;
  let chain: WebhookChain;
  let app: FastifyInstance;
  let verifier: ChainVerifier;
  let registry: Registry;
  let payee: Payee;
  /** Signatures of real finalized transfers by amount, made once (the chain keeps them across tests). */
  const paid = new Map<bigint, string>();

  /** An app with its own verifier and metrics registry. */
  const build = (o: Partial<WebhookAppOptions> & { maxAgeMs?: number } = {}) => {
    const registry = new Registry();
    const webhookMetrics = createWebhookMetrics(registry);
    const ledger = createLedger({ db: db.pool });
    const verifier = createChainVerifier({
      db: db.pool,
      rpc: chain.rpc,
      ledger,
      cluster: CLUSTER,
      // How long a hint is held for the chain: on a real validator a transaction takes ~13 s and more to finalize.
      maxAgeMs: o.maxAgeMs ?? scaledWait(60_000),
      recheck: { baseMs: 20, capMs: 100 },
      metrics: webhookMetrics,
    });
    return {
      app: buildWebhookApp({
        db: db.pool,
        ledger,
        cluster: CLUSTER,
        secret: SECRET,
        verifier,
        webhookMetrics,
        registry,
        ...o,
      }),
      verifier,
      registry,
    };
  };

  before(async () => {
    db = await createTestDb('webhook');
    chain = await startWebhookChain();
    payee = await chain.payee();
    for (const a of [700n, 400n, 500n, 300n, 10n, 20n, 77n, 42n, 8n, 6n, 7n, 5n])
      paid.set(a, await chain.pay(a, payee));
    ({ app, verifier, registry } = build());
    await app.ready();
  });
  after(async () => {
    await app?.close();
    await chain?.stop();
    await db?.drop();
  });
  beforeEach(async () => {
    await db.pool.query(
      'TRUNCATE invoices, receipts, exceptions, fulfilments, outbox, receipt_delivery_counts, webhook_events, webhook_dead_letters, webhook_hints CASCADE',
    );
  });

  /** The finalized getTransaction result of the real transfer of `amount` to the payee. */
  const txItem = (amount: bigint) => chain.item(paid.get(amount)!);
  async function count(table: string, where = 'true'): Promise<number> {
    return (await db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)).rows[0].n;
  }
  async function credited(id: string): Promise<bigint> {
    return BigInt(
      (await db.pool.query('SELECT credited_amount::text AS c FROM invoices WHERE id = $1', [id])).rows[0].c,
    );
  }
  async function hint(signature: string): Promise<Json> {
    return (
      await db.pool.query('SELECT state::text, drop_reason, checks FROM webhook_hints WHERE signature = $1', [
        signature,
      ])
    ).rows[0];
  }
  function post(body: string | Buffer, headers: Record<string, string> = signed(body), provider = 'helius', to = app) {
    return to.inject({
      method: 'POST',
      url: `/v1/webhooks/${provider}`,
      headers: { 'content-type': 'application/json', ...headers },
      payload: body,
    });
  }
  const invoice = (id: string, expectedAmount: bigint) =>
    createLedger({ db: db.pool }).createInvoice({ id, mint: payee.mint, expectedAmount, depositAddress: payee.owner });
  /** Run the verifier's background rounds until the hint of `signature` is settled (or deleted: `state: 'deleted'`). */
  async function settle(signature: string, v = verifier): Promise<Json> {
    for (let i = 0; i < 2000; i++) {
      await v.checkDue();
      const h = (await hint(signature)) ?? { state: 'deleted' };
      if (h.state !== 'pending') return h;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`hint ${signature} never settled`);
  }
  /** The transaction with its transferChecked instruction ([12, u64 amount, decimals]) rewritten to `amount`. */
  function claimingAmount(item: Record<string, unknown>, amount: bigint): Record<string, unknown> {
    const ix = (item.transaction as Json).message.instructions[0];
    const data = Buffer.from(bs58.decode(ix.data));
    data.writeBigUInt64LE(amount, 1);
    ix.data = bs58.encode(data);
    return item;
  }
  const metric = async (name: string, reason: string, reg = registry) => {
    const m = (await reg.getMetricsAsJSON()).find((x) => x.name === name)!;
    return Number(m.values.find((v) => v.labels.reason === reason)?.value ?? 0);
  };

  it('a real transfer is verified with getTransaction and credited; the same delivery 20× credits once, duplicate: true after the first', async () => {
    await invoice('inv-20', 700n);
    const body = JSON.stringify([await txItem(700n)]);
    for (let k = 0; k < 20; k++) {
      const res = await post(body, { ...signed(body), 'webhook-id': 'evt-20' });
      expect(res.statusCode, res.body).to.equal(200);
      expect(res.json()).to.deep.include({ ok: true, verified: true, duplicate: k > 0, eventId: 'evt-20' });
      if (k === 0) expect(res.json()).to.deep.include({ credited: 1, pending: 0, inserted: 1 });
    }
    expect(await credited('inv-20')).to.equal(700n);
    expect(await count('receipts')).to.equal(1);
    expect(await count('exceptions')).to.equal(0);
    expect(await count('webhook_events')).to.equal(1);
    expect(await hint(paid.get(700n)!)).to.deep.include({ state: 'credited' });
  });

  it('20 concurrent copies of one delivery: all 2xx, exactly one applied, one credit', async () => {
    await invoice('inv-conc', 900n);
    const body = JSON.stringify({ id: 'evt-conc', events: [await txItem(400n), await txItem(500n)] });
    const res = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    for (const r of res) expect([200, 202], r.body).to.include(r.statusCode);
    await settle(paid.get(500n)!);
    await settle(paid.get(400n)!);
    const inserted = res.reduce((a, r) => a + r.json().inserted, 0);
    expect(inserted).to.be.at.most(2);
    expect(res.filter((r) => !r.json().duplicate).length).to.equal(1);
    expect(await credited('inv-conc')).to.equal(900n);
    expect(await count('receipts')).to.equal(2);
    expect(await count('exceptions')).to.equal(0);
    expect(await count('webhook_events')).to.equal(1);
  });

  it('the same delivery 20× without an event id still credits once (one hint per signature), 2xx every time; a bare signature is a delivery too', async () => {
    await invoice('inv-noid', 300n);
    const body = JSON.stringify(await txItem(300n));
    for (let k = 0; k < 20; k++) {
      const res = await post(body);
      expect(res.statusCode, res.body).to.equal(200);
      expect(res.json()).to.deep.include({ credited: 1, pending: 0 });
    }
    const bare = JSON.stringify({ signatures: [paid.get(300n)] });
    expect((await post(bare)).json()).to.deep.include({ credited: 1, inserted: 0 });
    expect(await credited('inv-noid')).to.equal(300n);
    expect(await count('receipts')).to.equal(1);
    expect(await count('webhook_hints')).to.equal(1);
  });

  it('an event id reused with a different body is processed (flagged in the log), not dropped as a duplicate', async () => {
    await invoice('inv-reuse', 30n);
    const first = await post(JSON.stringify([await txItem(10n)]), {
      ...signed(JSON.stringify([await txItem(10n)])),
      'webhook-id': 'evt-reuse',
    });
    expect(first.json()).to.deep.include({ duplicate: false, inserted: 1 });
    const otherBody = JSON.stringify([await txItem(20n)]);
    const other = await post(otherBody, { ...signed(otherBody), 'webhook-id': 'evt-reuse' });
    expect(other.statusCode).to.equal(200);
    expect(other.json()).to.deep.include({ duplicate: false, inserted: 1 });
    expect(await credited('inv-reuse')).to.equal(30n);
    expect(await count('webhook_events')).to.equal(1);
  });

  it('a signature that exists on no chain is never credited: held (202), re-checked with backoff, deleted when it expires, counted as dropped not_found', async () => {
    const { app: short, verifier: shortVerifier, registry: shortRegistry } = build({ maxAgeMs: 300 });
    try {
      await invoice('inv-forged', 1_000_000n);
      const forged = bs58.encode(randomBytes(64));
      // A forged delivery: a real transaction's JSON with another signature and a large amount.
      const item = await txItem(5n);
      (item.transaction as Json).signatures = [forged];
      const body = JSON.stringify([item]);
      const res = await post(body, signed(body), 'helius', short);
      expect(res.statusCode, res.body).to.equal(202);
      expect(res.json()).to.deep.include({ pending: 1, credited: 0, inserted: 0 });
      const checked = await hint(forged);
      expect(checked).to.deep.include({ state: 'pending', checks: 1 });
      const h = await settle(forged, shortVerifier);
      // Expired unconfirmed: the row is gone (nothing a sender made up stays in the table), the drop is counted.
      expect(h).to.deep.equal({ state: 'deleted' });
      expect(await credited('inv-forged')).to.equal(0n);
      expect(await count('receipts')).to.equal(0);
      expect(await metric('oncepay_webhook_provisional_dropped_total', 'not_found', shortRegistry)).to.equal(1);
      const gauge = (await shortRegistry.getMetricsAsJSON()).find(
        (x) => x.name === 'oncepay_webhook_provisional_pending',
      )!;
      expect(gauge.values[0].value).to.equal(0);
    } finally {
      await short.close();
    }
  });

  it('a signature that lands after the delivery is credited on re-check', async () => {
    await invoice('inv-late', 123n);
    const later = await chain.signed(123n, payee);
    const body = JSON.stringify({ signatures: [later.signature] });
    const res = await post(body);
    expect(res.statusCode, res.body).to.equal(202);
    expect(res.json()).to.deep.include({ pending: 1 });
    await verifier.checkDue();
    expect(await credited('inv-late')).to.equal(0n);
    await later.send();
    expect(await settle(later.signature)).to.deep.include({ state: 'credited' });
    expect(await credited('inv-late')).to.equal(123n);
  });

  it('a transaction that failed on chain is dropped (failed_on_chain), nothing credited', async () => {
    const sig = await chain.payFailing(payee);
    await chain.item(sig); // finalized
    const body = JSON.stringify([sig]);
    const res = await post(body);
    expect(res.statusCode, res.body).to.equal(200);
    expect(res.json()).to.deep.include({ dropped: 1, credited: 0 });
    expect(await hint(sig)).to.deep.include({ state: 'dropped', drop_reason: 'failed_on_chain' });
    expect(await count('receipts')).to.equal(0);
  });

  it('a delivery whose transaction says 1,000,000 where the chain moved 6: the chain wins (6 credited), the disagreement is counted and the body dead-lettered', async () => {
    await invoice('inv-lie', 6n);
    const body = JSON.stringify([claimingAmount(await txItem(6n), 1_000_000n)]);
    const res = await post(body);
    expect(res.statusCode, res.body).to.equal(200);
    expect(res.json()).to.deep.include({ credited: 1, inserted: 1, deadLettered: 1 });
    expect(res.json().rejected[0].code).to.equal(WEBHOOK_CODES.BALANCE_MISMATCH);
    expect(await credited('inv-lie')).to.equal(6n);
    expect(await metric('oncepay_webhook_verification_failures_total', 'balance_mismatch')).to.equal(1);
    const { rows } = await db.pool.query('SELECT reason, origin, item_index FROM webhook_dead_letters');
    expect(rows).to.deep.equal([{ reason: WEBHOOK_CODES.BALANCE_MISMATCH, origin: 'delivery', item_index: 0 }]);
  });

  it("a real transaction whose transfers its own balances refute (fee mint paid twice into one account) is refused: dropped, the chain's answer dead-lettered, nothing credited", async () => {
    const t = await chain.payFeeMintTwice();
    await createLedger({ db: db.pool }).createInvoice({
      id: 'inv-fee',
      mint: t.mint,
      expectedAmount: 20_000_000n,
      depositAddress: t.owner,
    });
    await chain.item(t.signature); // finalized
    const before = await metric('oncepay_webhook_verification_failures_total', 'balance_mismatch');
    const body = JSON.stringify({ signatures: [t.signature] });
    const res = await post(body);
    expect(res.statusCode, res.body).to.equal(200);
    expect(res.json()).to.deep.include({ dropped: 1, credited: 0, inserted: 0 });
    expect(await hint(t.signature)).to.deep.include({ state: 'dropped', drop_reason: 'balance_mismatch' });
    expect(await credited('inv-fee')).to.equal(0n);
    expect(await count('receipts')).to.equal(0);
    const { rows } = await db.pool.query(
      "SELECT reason, origin, signature, detail, convert_from(raw_body, 'UTF8') AS raw FROM webhook_dead_letters",
    );
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({
      reason: WEBHOOK_CODES.BALANCE_MISMATCH,
      origin: 'chain',
      signature: t.signature,
    });
    expect(rows[0].detail).to.include('ONCEPAY__DECODE__BALANCE_MISMATCH');
    expect(JSON.parse(rows[0].raw).transaction.signatures[0]).to.equal(t.signature);
    expect(await metric('oncepay_webhook_verification_failures_total', 'balance_mismatch')).to.equal(before + 1);
    expect(await metric('oncepay_webhook_provisional_dropped_total', 'balance_mismatch')).to.equal(1);
  });

  it('a delivery claiming another destination than the chain: credited as the chain says, body_mismatch counted', async () => {
    const item = await txItem(7n);
    const other = await chain.payee();
    // A body that agrees with itself but not with the chain: the destination's balance entry and key swapped.
    const keys = (item.transaction as Json).message.accountKeys as string[];
    keys[keys.indexOf(payee.account)] = other.account;
    const body = JSON.stringify([item]);
    const res = await post(body);
    expect(res.json()).to.deep.include({ credited: 1, inserted: 1 });
    expect(await metric('oncepay_webhook_verification_failures_total', 'body_mismatch')).to.equal(1);
    const { rows } = await db.pool.query('SELECT destination FROM receipts');
    expect(rows).to.deep.equal([{ destination: payee.account }]);
  });

  it('replay: a captured delivery outside the window is 401 TIMESTAMP_OUTSIDE_WINDOW; inside it the event dedup answers duplicate', async () => {
    const body = JSON.stringify([await txItem(8n)]);
    const headers = { ...signed(body), 'webhook-id': 'evt-replay' };
    expect((await post(body, headers)).json()).to.deep.include({ duplicate: false, credited: 1 });
    expect((await post(body, headers)).json()).to.deep.include({ duplicate: true });
    const old = { ...signed(body, now() - 301), 'webhook-id': 'evt-replay' };
    const late = await post(body, old);
    expect(late.statusCode).to.equal(401);
    expect(late.json()).to.deep.equal({ code: WEBHOOK_CODES.TIMESTAMP_OUTSIDE_WINDOW, message: late.json().message });
    expect(await metric('oncepay_webhook_verification_failures_total', 'timestamp_outside_window')).to.equal(1);
  });

  it('wrong credentials are 401 (the same { code, message } shape as the merchant API) and nothing is stored; the deprecated schemes only with --legacy-signature', async () => {
    const body = JSON.stringify([await txItem(5n)]);
    for (const headers of <Array<Record<string, string>>>[
      signed('other body'),
      { 'x-oncepay-signature': signDelivery('wrong', body, now()) },
      { 'x-oncepay-secret': SECRET },
      { authorization: `Bearer ${SECRET}` },
      { 'x-oncepay-signature': signBodyLegacy(SECRET, body) },
      {},
    ]) {
      const res = await post(body, { ...headers, 'webhook-id': 'evt-x' });
      expect(res.statusCode).to.equal(401);
      expect(res.json()).to.deep.equal({
        code: WEBHOOK_CODES.UNAUTHORIZED,
        message: 'missing or wrong webhook credentials',
      });
      expect(Object.keys(res.json())).to.deep.equal(
        Object.keys({ code: 'UNAUTHORIZED', message: API_ERRORS.UNAUTHORIZED.message }),
      );
    }
    expect((await post('{"trunc', { 'x-oncepay-secret': 'wrong' })).statusCode).to.equal(401);
    for (const t of ['receipts', 'webhook_events', 'webhook_dead_letters', 'webhook_hints'])
      expect(await count(t), t).to.equal(0);
    const { app: legacy } = build({ legacySignature: true });
    try {
      expect((await post(body, { 'x-oncepay-secret': SECRET }, 'helius', legacy)).statusCode).to.equal(200);
      expect(
        (await post(body, { 'x-oncepay-signature': signBodyLegacy(SECRET, body) }, 'helius', legacy)).statusCode,
      ).to.equal(200);
      expect((await post(body, { 'x-oncepay-secret': 'wrong' }, 'helius', legacy)).statusCode).to.equal(401);
    } finally {
      await legacy.close();
    }
  });

  it('an oversized body is 413 and nothing is stored', async () => {
    const big = JSON.stringify({ events: [await txItem(5n)], pad: 'x'.repeat(1024 * 1024) });
    const res = await post(big);
    expect(res.statusCode).to.equal(413);
    expect(res.json().code).to.equal(WEBHOOK_CODES.BODY_TOO_LARGE);
    for (const t of ['receipts', 'webhook_events', 'webhook_dead_letters']) expect(await count(t), t).to.equal(0);
  });

  it('truncated JSON is 400 with a reason code, and the raw body is kept as a dead letter', async () => {
    const whole = JSON.stringify([await txItem(42n)]);
    const truncated = whole.slice(0, Math.floor(whole.length / 2));
    const res = await post(truncated, { ...signed(truncated), 'x-oncepay-event-id': 'evt-trunc' });
    expect(res.statusCode).to.equal(400);
    expect(Object.keys(res.json())).to.deep.equal(['code', 'message']);
    expect(res.json().code).to.equal(WEBHOOK_CODES.MALFORMED_JSON);
    const { rows } = await db.pool.query(
      'SELECT provider, event_id, item_index, reason, raw_body, received_at FROM webhook_dead_letters',
    );
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({
      provider: 'helius',
      event_id: 'evt-trunc',
      item_index: null,
      reason: WEBHOOK_CODES.MALFORMED_JSON,
    });
    expect(Buffer.compare(rows[0].raw_body, Buffer.from(truncated))).to.equal(0);
    // Not recorded as an event: the provider's full redelivery under the same id is applied.
    const again = await post(whole, { ...signed(whole), 'x-oncepay-event-id': 'evt-trunc' });
    expect(again.json()).to.deep.include({ duplicate: false, inserted: 1 });
  });

  it('a mixed array: good items credited, the ones naming no signature dead-lettered with their index and reason', async () => {
    await invoice('inv-mixed', 30n);
    const bad = { ...(await txItem(77n)), transaction: { signatures: ['short'] } };
    const items = [await txItem(10n), bad, { type: 'TRANSFER', description: 'an enhanced event' }, await txItem(20n)];
    const body = JSON.stringify({ id: 'evt-mixed', events: items });
    const res = await post(body);
    expect(res.statusCode, res.body).to.equal(200);
    const r = res.json();
    expect(r).to.deep.include({ transactions: 4, credited: 2, inserted: 2, deadLettered: 2, eventId: 'evt-mixed' });
    expect(r.rejected.map((x: { index: number; code: string }) => [x.index, x.code])).to.deep.equal([
      [1, WEBHOOK_CODES.MALFORMED_TRANSACTION],
      [2, WEBHOOK_CODES.MALFORMED_TRANSACTION],
    ]);
    expect(await credited('inv-mixed')).to.equal(30n);
    const { rows } = await db.pool.query('SELECT item_index, reason FROM webhook_dead_letters ORDER BY item_index');
    expect(rows.map((x) => x.item_index)).to.deep.equal([1, 2]);
  });

  it('every item unusable is 400 with the reason, all kept; a JSON-RPC envelope is accepted; a bare string body is not a shape', async () => {
    const bodyBad = JSON.stringify([{ foo: 1 }, 42]);
    const res = await post(bodyBad);
    expect(res.statusCode).to.equal(400);
    expect(res.json().code).to.equal(WEBHOOK_CODES.MALFORMED_TRANSACTION);
    expect(await count('webhook_dead_letters')).to.equal(2);
    const env = JSON.stringify({ jsonrpc: '2.0', id: 1, result: await txItem(5n) });
    expect((await post(env)).json()).to.deep.include({ transactions: 1, credited: 1 });
    const shape = await post('"just a string"');
    expect(shape.json().code).to.equal(WEBHOOK_CODES.UNSUPPORTED_SHAPE);
  });

  it('--trust-provider credits the delivery without the chain (old behaviour), but still refuses transfers its balances refute', async () => {
    const trusting = buildWebhookApp({
      db: db.pool,
      ledger: createLedger({ db: db.pool }),
      cluster: CLUSTER,
      secret: SECRET,
      trustProvider: true,
    });
    try {
      await invoice('inv-trust', 6n);
      const lie = JSON.stringify([claimingAmount(await txItem(6n), 1_000_000n)]);
      const refused = await post(lie, signed(lie), 'helius', trusting);
      expect(refused.statusCode).to.equal(400);
      expect(refused.json().code).to.equal(WEBHOOK_CODES.BALANCE_MISMATCH);
      expect(await count('webhook_dead_letters', `reason = '${WEBHOOK_CODES.BALANCE_MISMATCH}'`)).to.equal(1);
      expect(await credited('inv-trust')).to.equal(0n);
      const honest = JSON.stringify([await txItem(6n)]);
      const ok = await post(honest, signed(honest), 'helius', trusting);
      expect(ok.json()).to.deep.include({ verified: false, inserted: 1 });
      expect(await credited('inv-trust')).to.equal(6n);
      expect(await count('webhook_hints')).to.equal(0);
    } finally {
      await trusting.close();
    }
  });

  it('answers /healthz, and unknown routes / bad providers with a code', async () => {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).to.deep.equal({ ok: true });
    const nf = await app.inject({ method: 'GET', url: '/nope' });
    expect(nf.statusCode).to.equal(404);
    expect(nf.json().code).to.equal(WEBHOOK_CODES.NOT_FOUND);
    const badProvider = await post('[]', signed('[]'), 'Bad%20Provider');
    expect(badProvider.statusCode).to.equal(400);
    expect(badProvider.json().code).to.equal(WEBHOOK_CODES.INVALID_REQUEST);
  });

  const children = new Set<ChildProcess>();
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  function startWebhook(env: Record<string, string>, args: string[] = []) {
    const child: ChildProcess = spawn(
      process.execPath,
      [
        path.resolve(__dirname, '../../../bin/oncepay'),
        'indexer',
        'webhook',
        '--port',
        '0',
        '--cluster',
        CLUSTER,
        '--rpc',
        chain.net.url,
        '--recheck-ms',
        '50',
        '--provider',
        'test',
        ...args,
      ],
      {
        env: {
          ...process.env,
          ...db.env,
          ONCEPAY_FROM_SOURCE: '1',
          NODE_ENV: 'test',
          ONCEPAY_WEBHOOK_SECRET: SECRET,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
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
    return { child, exited, address, stderr: () => stderr };
  }

  it('SIGKILL right after the hints are stored: the restarted process credits them by itself, a redelivery is a duplicate', async () => {
    await invoice('inv-crash', 77n);
    const body = JSON.stringify([await txItem(77n)]);
    const headers = { 'content-type': 'application/json', ...signed(body), 'webhook-id': 'evt-crash' };
    const crashed = startWebhook({ ONCEPAY_FAILPOINT: 'webhook.after_hints_stored' });
    const url = await crashed.address;
    const lost = await fetch(`${url}/v1/webhooks/p`, { method: 'POST', headers, body }).then(
      () => 'answered',
      () => 'no answer',
    );
    expect(lost).to.equal('no answer');
    expect((await crashed.exited).signal).to.equal('SIGKILL');
    expect(await credited('inv-crash')).to.equal(0n);
    expect(await hint(paid.get(77n)!)).to.deep.include({ state: 'pending' });
    // The crashed process's own background round may have leased the hint before the kill (a minute's lease): the
    // restart must not wait it out, whichever way the race went.
    const { lease_until: leaseUntil } = (
      await db.pool.query(`SELECT lease_until FROM webhook_hints WHERE signature = $1`, [paid.get(77n)!])
    ).rows[0];

    const again = startWebhook({});
    try {
      await again.address;
      for (let i = 0; i < 2000 && (await hint(paid.get(77n)!)).state === 'pending'; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await credited('inv-crash')).to.equal(77n);
      if (leaseUntil !== null) {
        const { settled_at } = (
          await db.pool.query(`SELECT settled_at FROM webhook_hints WHERE signature = $1`, [paid.get(77n)!])
        ).rows[0];
        expect(settled_at.getTime(), 'credited before the dead holder lease would have ended').to.be.below(
          leaseUntil.getTime(),
        );
      }
      const res = await fetch(`${await again.address}/v1/webhooks/p`, { method: 'POST', headers, body });
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.include({ duplicate: true });
    } finally {
      again.child.kill('SIGTERM');
    }
    expect((await again.exited).code).to.equal(0);
    expect(await credited('inv-crash')).to.equal(77n);
    expect(await count('exceptions')).to.equal(0);
    expect(await count('webhook_events')).to.equal(1);
  });

  it('SIGKILL while its hints are leased (mid-check): the restarted process takes them at once, before their lease would end', async () => {
    await invoice('inv-leased', 8n);
    const body = JSON.stringify([await txItem(8n)]);
    const headers = { 'content-type': 'application/json', ...signed(body), 'webhook-id': 'evt-leased' };
    const crashed = startWebhook({ ONCEPAY_FAILPOINT: 'webhook.after_hints_leased' });
    const url = await crashed.address;
    await fetch(`${url}/v1/webhooks/p`, { method: 'POST', headers, body }).catch(() => 'no answer');
    expect((await crashed.exited).signal).to.equal('SIGKILL');
    const leased = (
      await db.pool.query(
        `SELECT state::text, lease_until, holder_pid IS NOT NULL AS held FROM webhook_hints WHERE signature = $1`,
        [paid.get(8n)!],
      )
    ).rows[0];
    // Killed holding the lease: a minute of it left.
    expect(leased).to.deep.include({ state: 'pending', held: true });
    expect(leased.lease_until.getTime()).to.be.greaterThan(Date.now() + 30_000);

    const again = startWebhook({});
    try {
      await again.address;
      for (let i = 0; i < 2000 && (await hint(paid.get(8n)!)).state === 'pending'; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await credited('inv-leased')).to.equal(8n);
      const { settled_at } = (
        await db.pool.query(`SELECT settled_at FROM webhook_hints WHERE signature = $1`, [paid.get(8n)!])
      ).rows[0];
      expect(settled_at.getTime(), 'credited before the dead holder lease would have ended').to.be.below(
        leased.lease_until.getTime(),
      );
    } finally {
      again.child.kill('SIGTERM');
    }
    expect((await again.exited).code).to.equal(0);
  });

  it('`oncepay indexer webhook` verifies deliveries, serves /metrics with the verification series, warns on --trust-provider, stops on SIGTERM', async () => {
    // A generous inline check: this case expects the verified answer (200) of a delivery whose transaction is
    // final; the default 2 s ran out on solana-test-validator once, and the delivery was held (202).
    const server = startWebhook({}, ['--inline-check-ms', '30000']);
    try {
      const address = await server.address;
      expect(address).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const body = JSON.stringify([await txItem(42n)]);
      const res = await fetch(`${address}/v1/webhooks/test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signed(body) },
        body,
      });
      // Verified and credited (200), by this request's own check or by the background round that took the hint
      // first (then the request waits for it, and the receipt is counted once, as the round's).
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.include({ credited: 1, pending: 0, verified: true });
      const metrics = await (await fetch(`${address}/metrics`)).text();
      expect(metrics).to.match(/oncepay_webhook_deliveries_total\{provider="test",result="applied"\} 1/);
      expect(metrics).to.match(/oncepay_receipts_total\{cluster="wh",source="webhook"\} 1/);
      expect(metrics).to.match(/oncepay_webhook_verification_failures_total\{reason="timestamp_outside_window"\} 0/);
      expect(metrics).to.match(/oncepay_webhook_provisional_dropped_total\{reason="not_found"\} 0/);
      expect(metrics).to.match(/oncepay_webhook_provisional_pending 0/);
      expect(metrics).to.match(/oncepay_rpc_errors_total|oncepay_webhook_provisional_pending/);
    } finally {
      server.child.kill('SIGTERM');
    }
    const exit = await server.exited;
    expect(exit.code, exit.stderr).to.equal(0);
    expect(exit.stderr).to.not.include(SECRET);

    const trusting = startWebhook({}, ['--trust-provider']);
    await trusting.address;
    trusting.child.kill('SIGTERM');
    const t = await trusting.exited;
    expect(t.code, t.stderr).to.equal(0);
    expect(t.stderr).to.match(/NOT verified against the chain/);
  });
});
