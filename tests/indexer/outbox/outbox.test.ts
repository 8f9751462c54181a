// The outbox worker against the real PostgreSQL server and a real local HTTP endpoint.
import * as http from 'http';
import { AddressInfo } from 'net';
import { expect } from 'chai';
import pino from 'pino';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { createLedger, fulfilmentOpId, Ledger } from '../../../indexer/ledger';
import { createOutboxWorker, replayDeadLetters, OUTBOX_CODES } from '../../../indexer/outbox';
import { createWebhookDelivery, verifySignature } from '../../../indexer/delivery';
import { createIndexerMetrics, serveMetrics } from '../../../indexer/metrics';
import { addr, receipt, sig } from '../ledger/fixtures';
import { startMerchantServer, MerchantServer } from './merchant-server';
import { exec } from '../../../db/sql';
import { upsertWebhookEndpoint } from '../../../indexer/outbox/queries';

const SECRET = 'whsec_test';
const silent = pino({ level: 'silent' });

/** `merchantOf` names each invoice's merchant (else the ledger's 'default'). */
async function payInvoices(ledger: Ledger, ids: string[], merchantOf?: (id: string) => string): Promise<void> {
  for (const id of ids)
    await ledger.createInvoice({
      id,
      merchant: merchantOf?.(id),
      mint: addr('mint-usdc'),
      expectedAmount: 50n,
      depositAddress: addr(`dep-${id}`),
    });
  await ledger.applyBatch({
    cluster: 'localnet',
    source: 'scanner',
    receipts: ids.map((id) => receipt({ signature: sig(`pay-${id}`), destination: addr(`dep-${id}`), amount: 50n })),
  });
}

describe('indexer/outbox', () => {
  let t: TestDb;
  let ledger: Ledger;
  let merchant: MerchantServer;
  beforeEach(async () => {
    t = await createTestDb('outbox');
    ledger = createLedger({ db: t.pool, log: silent });
    merchant = await startMerchantServer();
  });
  afterEach(async () => {
    await merchant.close();
    await t.drop();
  });

  function worker(extra: Partial<Parameters<typeof createOutboxWorker>[0]> = {}) {
    return createOutboxWorker({
      db: t.pool,
      log: silent,
      deliver: createWebhookDelivery({ timeoutMs: 5000 }),
      url: merchant.url,
      secret: SECRET,
      pollMs: 10,
      ...extra,
    });
  }

  it('delivers each paid invoice once, with the fulfilment id as Idempotency-Key and a valid HMAC signature', async () => {
    await payInvoices(ledger, ['I-1', 'I-2', 'I-3']);
    const w = worker();
    const round = await w.runOnce();
    expect(round).to.deep.equal({ claimed: 3, delivered: 3, failed: 0, dead: 0 });
    expect(await w.runOnce()).to.deep.equal({ claimed: 0, delivered: 0, failed: 0, dead: 0 });
    expect(merchant.seen.map((s) => s.idempotencyKey).sort()).to.deep.equal(
      ['I-1', 'I-2', 'I-3'].map(fulfilmentOpId).sort(),
    );
    for (const s of merchant.seen) {
      expect(verifySignature(SECRET, s.signature, s.body, { nowSeconds: Math.floor(Date.now() / 1000) })).to.equal(
        true,
      );
      expect(verifySignature('wrong', s.signature, s.body, { nowSeconds: Math.floor(Date.now() / 1000) })).to.equal(
        false,
      );
      expect(
        verifySignature(SECRET, s.signature, s.body + ' ', { nowSeconds: Math.floor(Date.now() / 1000) }),
      ).to.equal(false);
      const body = JSON.parse(s.body);
      expect(body.fulfilmentId).to.equal(s.idempotencyKey);
      expect(s.topic).to.equal('invoice.paid');
    }
    const { rows } = await t.pool.query(`SELECT state, attempts, last_status FROM outbox`);
    expect(rows.every((r) => r.state === 'delivered' && r.attempts === 1 && r.last_status === 200)).to.equal(true);
  });

  it('retries failures with backoff, keeps the same key on every attempt, dead-letters after max attempts, and replays', async () => {
    await payInvoices(ledger, ['R-1']);
    merchant.respond = () => 503;
    const w = worker({ maxAttempts: 3, backoffBaseSeconds: 0, backoffCapSeconds: 0 });
    const total = await w.run({ drain: true });
    expect(total).to.deep.equal({ claimed: 3, delivered: 0, failed: 2, dead: 1 });
    let row = (await t.pool.query(`SELECT state, attempts, last_status, last_error FROM outbox`)).rows[0];
    expect(row).to.deep.equal({ state: 'dead', attempts: 3, last_status: 503, last_error: 'HTTP 503' });
    // The gauge behind the dead-letter alert counts the row for as long as it stays dead, not for an hour.
    expect(await w.stats()).to.deep.include({ depth: 0, dead: 1 });
    expect(new Set(merchant.seen.map((s) => s.idempotencyKey))).to.deep.equal(new Set([fulfilmentOpId('R-1')]));
    // Identical bytes each attempt: the receiver may compare bodies under one key.
    expect(new Set(merchant.seen.map((s) => s.body)).size).to.equal(1);

    let code: string | undefined;
    try {
      await replayDeadLetters(t.pool, { id: 'no-such-row' });
    } catch (e) {
      code = (e as { code?: string }).code;
    }
    expect(code).to.equal(OUTBOX_CODES.NOT_DEAD);
    merchant.respond = () => 200;
    expect(await replayDeadLetters(t.pool, { id: fulfilmentOpId('R-1') })).to.have.length(1);
    expect(await w.stats()).to.deep.include({ depth: 1, dead: 0 });
    expect(await w.run({ drain: true })).to.deep.equal({ claimed: 1, delivered: 1, failed: 0, dead: 0 });
    row = (await t.pool.query(`SELECT state, attempts FROM outbox`)).rows[0];
    expect(row).to.deep.equal({ state: 'delivered', attempts: 1 });
    expect(merchant.seen).to.have.length(4);
    expect(merchant.seen[3].idempotencyKey).to.equal(fulfilmentOpId('R-1'));
  });

  it('computes a capped exponential backoff with jitter in SQL', async () => {
    await payInvoices(ledger, ['B-1']);
    merchant.respond = () => 500;
    const w = worker({ maxAttempts: 10, backoffBaseSeconds: 100, backoffCapSeconds: 250 });
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      // Make the row due again without waiting, then measure the delay the failure path chose.
      await t.pool.query(`UPDATE outbox SET next_attempt_at = now()`);
      await w.runOnce();
      const { rows } = await t.pool.query(
        `SELECT extract(epoch FROM next_attempt_at - updated_at)::float8 AS d, attempts FROM outbox`,
      );
      expect(rows[0].attempts).to.equal(attempt);
      delays.push(rows[0].d);
    }
    // base·2^(n-1) capped at 250, times a jitter factor in [0.5, 1].
    expect(delays[0]).to.be.within(50, 100);
    expect(delays[1]).to.be.within(100, 200);
    expect(delays[2]).to.be.within(125, 250);
  });

  it('reclaims a delivering row whose lease ran out, and treats a connection failure as a retryable failure', async () => {
    await payInvoices(ledger, ['L-1']);
    // A worker claimed the row and died: it is 'delivering' with a lease in the past.
    await t.pool.query(
      `UPDATE outbox SET state = 'delivering', attempts = 1, locked_until = now() - interval '1 second'`,
    );
    const dead = createOutboxWorker({
      db: t.pool,
      log: silent,
      deliver: createWebhookDelivery({ timeoutMs: 2000 }),
      url: 'http://127.0.0.1:1/closed',
      secret: SECRET,
      backoffBaseSeconds: 0,
      backoffCapSeconds: 0,
    });
    const r1 = await dead.runOnce();
    expect(r1).to.deep.equal({ claimed: 1, delivered: 0, failed: 1, dead: 0 });
    expect((await t.pool.query(`SELECT last_error FROM outbox`)).rows[0].last_error).to.match(
      /ECONNREFUSED|fetch failed/,
    );
    const r2 = await worker().runOnce();
    expect(r2.delivered).to.equal(1);
    expect((await t.pool.query(`SELECT state, attempts FROM outbox`)).rows[0]).to.deep.equal({
      state: 'delivered',
      attempts: 3,
    });
  });

  it('does not claim a row another worker holds under a live lease (SKIP LOCKED + lease)', async () => {
    await payInvoices(ledger, ['S-1', 'S-2', 'S-3', 'S-4']);
    const results = await Promise.all([1, 2, 3, 4].map(() => worker({ batchSize: 2 }).run({ drain: true })));
    expect(results.reduce((s, r) => s + r.delivered, 0)).to.equal(4);
    expect(merchant.seen).to.have.length(4);
    expect(new Set(merchant.seen.map((s) => s.idempotencyKey)).size).to.equal(4);
  });

  it('fails a row without a target or secret with its code, and serves outbox depth on /metrics', async () => {
    await payInvoices(ledger, ['N-1']);
    const w = createOutboxWorker({
      db: t.pool,
      log: silent,
      deliver: createWebhookDelivery(),
      backoffBaseSeconds: 1000,
    });
    expect((await w.runOnce()).failed).to.equal(1);
    expect((await t.pool.query(`SELECT last_error FROM outbox`)).rows[0].last_error).to.contain(OUTBOX_CODES.NO_TARGET);
    const metrics = createIndexerMetrics({ outboxStats: () => w.stats() });
    const server = await serveMetrics({ port: 0, registry: metrics.registry });
    try {
      const text = await (await fetch(server.url)).text();
      expect(text).to.match(/^oncepay_outbox_depth 1$/m);
      expect(text).to.match(/^oncepay_outbox_oldest_age_seconds \d/m);
      expect(text).to.match(/^oncepay_outbox_dead 0$/m);
      expect(text).to.contain('oncepay_checkpoint_lag_slots');
      expect((await fetch(server.url.replace('/metrics', '/nope'))).status).to.equal(404);
    } finally {
      await server.close();
    }
  });

  it("without --url/--secret each row goes to its merchant's own webhook endpoint (outbox set-endpoint), signed with its secret", async () => {
    await payInvoices(ledger, ['A-1', 'B-1'], (id) => (id === 'A-1' ? 'shop-a' : 'shop-b'));
    await exec(t.pool, upsertWebhookEndpoint('shop-a', 'http://127.0.0.1:9/nowhere', 'old'));
    await exec(t.pool, upsertWebhookEndpoint('shop-a', merchant.url, 'whsec_shop_a')); // set again: replaced
    const w = createOutboxWorker({
      db: t.pool,
      log: silent,
      deliver: createWebhookDelivery({ timeoutMs: 5000 }),
      backoffBaseSeconds: 1000,
    });
    expect(await w.runOnce()).to.deep.equal({ claimed: 2, delivered: 1, failed: 1, dead: 0 });
    expect(merchant.seen.map((s) => s.idempotencyKey)).to.deep.equal([fulfilmentOpId('A-1')]);
    const s = merchant.seen[0];
    expect(
      verifySignature('whsec_shop_a', s.signature, s.body, { nowSeconds: Math.floor(Date.now() / 1000) }),
    ).to.equal(true);
    const { rows } = await t.pool.query(`SELECT merchant, state, last_error FROM outbox ORDER BY merchant`);
    expect(rows.map((r) => [r.merchant, r.state])).to.deep.equal([
      ['shop-a', 'delivered'],
      ['shop-b', 'pending'],
    ]);
    expect(rows[1].last_error).to.contain(OUTBOX_CODES.NO_TARGET).and.contain('shop-b');
  });

  it('gives up on a merchant that does not answer after the timeout, and retries later', async () => {
    await payInvoices(ledger, ['T-1']);
    const sockets = new Set<import('net').Socket>();
    const silentServer = http.createServer(() => undefined); // reads the request, never answers
    silentServer.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => silentServer.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silentServer.address() as AddressInfo).port}/hook`;
      const w = createOutboxWorker({
        db: t.pool,
        log: silent,
        deliver: createWebhookDelivery({ timeoutMs: 300 }),
        url,
        secret: SECRET,
        backoffBaseSeconds: 0,
        backoffCapSeconds: 0,
      });
      expect(await w.runOnce()).to.deep.equal({ claimed: 1, delivered: 0, failed: 1, dead: 0 });
      const row = (await t.pool.query(`SELECT state, last_error, last_status FROM outbox`)).rows[0];
      expect(row).to.deep.equal({ state: 'pending', last_error: 'timeout after 300 ms', last_status: null });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silentServer.close(() => resolve()));
    }
  });
});
