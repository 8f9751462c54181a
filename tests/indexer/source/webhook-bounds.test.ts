// Held webhook hints are bounded and fair, on the real ledger, PostgreSQL and a real node (`oncepay localnet`):
// - a cap per provider bucket (a configured name, or `unknown` for every other name): a delivery past it is 429 with
//   Retry-After, nothing of it stored, counted; redelivering what is already held is not "more";
// - settled hints are deleted after the retention (unconfirmed ones when they expire: webhook.test.ts);
// - a flood of made-up signatures much larger than a status call (256) cannot hold a real payment back: it is
//   credited in the first round after its transaction is final, and that round costs one getSignatureStatuses per
//   256 hints and one getTransaction (the real one's) — counted on the wire, not timed;
// - a fresh notification goes before the flood when a round is smaller than the flood (least-checked first);
// - a lease belongs to the session that took it: a terminated session's hints are taken again at once.
import { expect } from 'chai';
import { randomBytes } from 'crypto';
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { createLedger } from '../../../indexer/ledger';
import { createRpcClient } from '../../../indexer/rpc';
import { buildWebhookApp, HINTS_RETRY_AFTER_S } from '../../../indexer/source/webhook';
import { signDelivery } from '../../../indexer/source/webhook-auth';
import { createWebhookMetrics } from '../../../indexer/source/webhook-metrics';
import { ChainVerifierOptions, createChainVerifier } from '../../../indexer/source/webhook-verifier';
import { createWebhookStore } from '../../../indexer/source/webhook-store';
import { Payee, startWebhookChain, WebhookChain } from './webhook-chain';

const SECRET = 'whsec-bounds-0123456789';
const CLUSTER = 'wh-bounds';
const junk = (n: number) => Array.from({ length: n }, () => bs58.encode(randomBytes(64)));

describe('indexer/source webhook hints: bounded and fair (localnet)', function () {
  this.timeout(600_000);
  let db: TestDb;
  let chain: WebhookChain;
  let payee: Payee;
  const closers: Array<() => unknown> = [];
  /** JSON-RPC calls by method, as the verifier's client made them (a counting fetch in front of the real node). */
  const calls: Record<string, number> = {};

  before(async () => {
    db = await createTestDb('webhook_bounds');
    chain = await startWebhookChain();
    payee = await chain.payee();
  });
  after(async () => {
    for (const c of closers) await c();
    await chain?.stop();
    await db?.drop();
  });
  beforeEach(async () => {
    await db.pool.query(
      'TRUNCATE invoices, receipts, exceptions, fulfilments, outbox, receipt_delivery_counts, webhook_events, webhook_dead_letters, webhook_hints CASCADE',
    );
  });

  function build(o: Partial<ChainVerifierOptions> & { inlineCheckMs?: number; providers?: string[] }) {
    const registry = new Registry();
    const metrics = createWebhookMetrics(registry, o.providers ?? []);
    const ledger = createLedger({ db: db.pool });
    const countingFetch: typeof fetch = async (input, init) => {
      const method = (JSON.parse(String(init?.body)) as { method: string }).method;
      calls[method] = (calls[method] ?? 0) + 1;
      return fetch(input, init);
    };
    const verifier = createChainVerifier({
      db: db.pool,
      rpc: createRpcClient({ url: chain.net.url, fetch: countingFetch, retry: { attempts: 2, timeoutMs: 20_000 } }),
      ledger,
      cluster: CLUSTER,
      recheck: { baseMs: 20, capMs: 100 },
      metrics,
      ...o,
    });
    const app = buildWebhookApp({
      db: db.pool,
      ledger,
      cluster: CLUSTER,
      secret: SECRET,
      verifier,
      webhookMetrics: metrics,
      registry,
      providers: o.providers,
      maxPendingHints: o.maxPendingHints,
      inlineCheckMs: o.inlineCheckMs,
    });
    closers.push(() => app.close());
    return { app, verifier, registry };
  }
  const post = (app: FastifyInstance, provider: string, signatures: string[]) => {
    const body = JSON.stringify({ signatures });
    return app.inject({
      method: 'POST',
      url: `/v1/webhooks/${provider}`,
      headers: {
        'content-type': 'application/json',
        'x-oncepay-signature': signDelivery(SECRET, body, Math.floor(Date.now() / 1000)),
      },
      payload: body,
    });
  };
  const count = async (where = 'true') =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM webhook_hints WHERE ${where}`)).rows[0].n as number;
  const overCapacity = async (registry: Registry, provider: string) =>
    (await registry.getMetricsAsJSON())
      .find((m) => m.name === 'oncepay_webhook_hints_over_capacity_total')!
      .values.find((v) => v.labels.provider === provider)?.value ?? 0;
  const snapshot = async () =>
    JSON.stringify(
      await Promise.all(
        ['webhook_hints', 'webhook_events', 'webhook_dead_letters'].map(
          async (t) => (await db.pool.query(`SELECT * FROM ${t} ORDER BY 1`)).rows,
        ),
      ),
    );

  it('a provider past its cap of pending hints gets 429 + Retry-After, nothing stored, counted; other buckets are not affected', async () => {
    const { app, registry } = build({ providers: ['helius'], maxPendingHints: 20, inlineCheckMs: 0 });
    const held = junk(20);
    {
      const r = await post(app, 'helius', held);
      expect(r.statusCode, r.body).to.equal(202);
    }
    const before = await snapshot();
    const over = await post(app, 'helius', junk(1));
    expect(over.statusCode, over.body).to.equal(429);
    expect(over.headers['retry-after']).to.equal(String(HINTS_RETRY_AFTER_S));
    expect(over.json().code).to.equal('ONCEPAY__WEBHOOK__HINTS_OVER_CAPACITY');
    expect(await snapshot(), 'nothing of the refused delivery stored').to.equal(before);
    expect(await overCapacity(registry, 'helius')).to.equal(1);
    // What is already held is not more: a redelivery of the same signatures is taken.
    expect((await post(app, 'helius', held.slice(0, 5))).statusCode).to.equal(202);
    // Every other name is one bucket, `unknown`, with its own cap; made-up names do not multiply it.
    expect((await post(app, 'made-up-1', junk(12))).statusCode).to.equal(202);
    expect((await post(app, 'made-up-2', junk(8))).statusCode).to.equal(202);
    const unknownOver = await post(app, 'made-up-3', junk(1));
    expect(unknownOver.statusCode).to.equal(429);
    expect(await overCapacity(registry, 'unknown')).to.equal(1);
    const labels = (await registry.getMetricsAsJSON()).find(
      (m) => m.name === 'oncepay_webhook_hints_over_capacity_total',
    )!;
    expect(labels.values.map((v) => v.labels.provider).sort()).to.deep.equal(['helius', 'unknown']);
    expect(await count("state = 'pending'")).to.equal(40);
  });

  it('settled hints are deleted after the retention; pending ones are not', async () => {
    const { app, verifier } = build({ retentionMs: 1, inlineCheckMs: 30_000 });
    const real = await chain.pay(9n, payee);
    await chain.item(real); // finalized
    expect((await post(app, 'p', [real])).statusCode).to.equal(200);
    expect((await post(app, 'p', junk(3))).statusCode).to.equal(202);
    expect(await count("state = 'credited'")).to.equal(1);
    await new Promise((r) => setTimeout(r, 20));
    await verifier.checkDue();
    expect(await count("state = 'credited'")).to.equal(0);
    expect(await count("state = 'pending'")).to.equal(3);
  });

  it('a real payment notified during a flood of 5,000 made-up signatures is credited in the first round after it is final, for ⌈5,001/256⌉ status calls and one getTransaction', async () => {
    const { app, verifier } = build({ maxPendingHints: 10_000, inlineCheckMs: 0 });
    const ledger = createLedger({ db: db.pool });
    await ledger.createInvoice({ id: 'inv-real', mint: payee.mint, expectedAmount: 31n, depositAddress: payee.owner });
    // The flood, five deliveries of 1,000, from the same provider the real payment comes from (the hard case).
    for (let i = 0; i < 5; i++) expect((await post(app, 'p', junk(1000))).statusCode).to.equal(202);
    // The real payment is notified before it is sent (as a provider at `processed` would), then lands.
    const real = await chain.signed(31n, payee);
    expect((await post(app, 'p', [real.signature])).statusCode).to.equal(202);
    await verifier.checkDue(); // the flood and the real hint, all unknown to the chain yet
    await real.send();
    await chain.item(real.signature); // finalized now
    await new Promise((r) => setTimeout(r, 150)); // past the real hint's backoff (the test's cap: 100 ms)
    const before = { ...calls };
    const round = await verifier.checkDue();
    const spent = (m: string) => (calls[m] ?? 0) - (before[m] ?? 0);
    expect((await ledger.getInvoice('inv-real'))!.creditedAmount, 'credited in this round').to.equal(31n);
    expect(round.credited).to.equal(1);
    expect(round.checked, 'the round took every due hint, the flood with it').to.be.greaterThan(5000);
    expect(spent('getSignatureStatuses')).to.equal(Math.ceil(round.checked / 256));
    expect(spent('getTransaction'), 'only the hint the chain has finalized is fetched').to.equal(1);
    // And the flood is still held, every one of it, while the real payment is credited.
    expect(await count("state = 'pending'")).to.equal(5000);
  });

  it('a round smaller than the flood takes a fresh notification first (least-checked first), so it is not queued behind the flood', async () => {
    const { app, verifier } = build({ maxPendingHints: 10_000, roundSize: 500, inlineCheckMs: 0 });
    const ledger = createLedger({ db: db.pool });
    await ledger.createInvoice({ id: 'inv-fresh', mint: payee.mint, expectedAmount: 47n, depositAddress: payee.owner });
    for (let i = 0; i < 3; i++) expect((await post(app, 'p', junk(1000))).statusCode).to.equal(202);
    // The flood has been looked at once (rounds of 500: six of them), and is due again.
    for (let i = 0; i < 6; i++) await verifier.checkDue();
    expect(await count("state = 'pending' AND checks = 0")).to.equal(0);
    await new Promise((r) => setTimeout(r, 150));
    const real = await chain.pay(47n, payee);
    await chain.item(real);
    expect((await post(app, 'p', [real])).statusCode).to.equal(202);
    const round = await verifier.checkDue();
    expect(round.checked).to.equal(500);
    expect((await ledger.getInvoice('inv-fresh'))!.creditedAmount).to.equal(47n);
  });

  it('a lease belongs to the session that took it: terminated, its hints are taken again at once, though the lease has 10 minutes left', async () => {
    const { app } = build({ inlineCheckMs: 0 });
    const sigs = junk(3);
    expect((await post(app, 'p', sigs)).statusCode).to.equal(202);
    const holder = await db.pool.connect();
    let leased: string[];
    try {
      leased = (await createWebhookStore(holder).leaseHints(CLUSTER, { limit: 10, leaseMs: 600_000, known: [] })).map(
        (h) => h.id,
      );
      expect(leased).to.have.length(3);
      // Another verifier: nothing to take while the holder lives.
      const other = createWebhookStore(db.pool);
      expect(await other.leaseHints(CLUSTER, { limit: 10, leaseMs: 60_000, known: [] })).to.deep.equal([]);
      const pid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      // With a timeout, pg_terminate_backend waits until the backend has exited (without one it only signals it,
      // and the next statement can still see the session alive).
      await db.pool.query('SELECT pg_terminate_backend($1, 10000)', [pid]);
      const leaseLeft = await count(`lease_until > now() + interval '9 minutes'`);
      expect(leaseLeft).to.equal(3);
      const taken = await other.leaseHints(CLUSTER, { limit: 10, leaseMs: 60_000, known: [] });
      expect(taken.map((h) => h.id).sort()).to.deep.equal([...leased].sort());
    } finally {
      holder.release(true);
    }
  });
});
