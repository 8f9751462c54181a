// The operator console in a real browser (Debian's chromium via puppeteer-core, testkit/browser.ts) against the real
// API app listening on loopback and a real PostgreSQL. The overpaid invoice's exception is made through the ledger
// API (createInvoice + applyBatch, as the indexer applies a scanned transfer), not by a payment on localnet: this
// suite checks the console's side of the exactly-once path — a double click and two isolated sessions store ONE
// refund payout keyed by the receipt — and tests/app/exception-*.test.ts / the refund suites prove the payout path
// pays that row once on chain. A dead letter made by a real outbox worker against a loopback receiver answering 500
// is replayed from the console and delivered. Every page passes axe-core with no console errors; the run writes
// docs/img/console.png.
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'puppeteer-core';
import * as path from 'node:path';
import { buildApiApp } from '../../app/api/build-api-app';
import { hashApiKey } from '../../app/api/api-key-auth';
import { addConsoleOperator } from '../../app/console/operators';
import { listExceptions } from '../../app/exception/store';
import { insertMerchant } from '../../app/merchant/store';
import { address } from '../../app/types';
import { createLedger } from '../../indexer/ledger';
import { createOutboxWorker } from '../../indexer/outbox';
import { createWebhookDelivery } from '../../indexer/delivery';
import { checkAccessibility, launchBrowser, openPage, WatchedPage } from '../../testkit/browser';
import { createTestDb, TestDb } from '../../testkit/test-db';
import { addr, receipt, sig } from '../indexer/ledger/fixtures';
import { startMerchantServer, MerchantServer } from '../indexer/outbox/merchant-server';

const PASSWORD = 'browser operator password';
const SCREENSHOT = path.join(__dirname, '..', '..', 'docs', 'img', 'console.png');

describe('browser: the operator console (chromium)', function () {
  this.timeout(180_000);
  let db: TestDb;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let receiver: MerchantServer;
  let exceptionId: string;
  let deadId: string;
  const mint = addr('browser-mint');
  let acceptWebhooks = false;
  let worker: ReturnType<typeof createOutboxWorker>;

  before(async () => {
    db = await createTestDb('browser_console');
    const m = await insertMerchant(db.pool, {
      name: 'shop',
      apiKeyHash: hashApiKey('browser-shop-key-0123456789'),
      programId: address(addr('program')),
      merchantAddress: address(addr('browser-merchant')),
      vault: address(addr('browser-vault')),
    });
    await addConsoleOperator(db.pool, 'alice', { password: PASSWORD });
    await addConsoleOperator(db.pool, 'bob', { password: PASSWORD });
    const ledger = createLedger({ db: db.pool });
    // An attacker-chosen invoice id with markup: the pages must show it as text.
    await ledger.createInvoice({ id: 'INV-<b>7</b>', mint, expectedAmount: 100n, depositAddress: m.vault });
    await ledger.applyBatch({
      cluster: 'localnet',
      source: 'scanner',
      receipts: [receipt({ signature: sig('browser-overpay'), destination: m.vault, mint, amount: 150n })],
    });
    exceptionId = (await listExceptions(db.pool))[0].id;
    // A dead letter, the real way: the outbox worker's only attempt gets a 500 from the merchant's endpoint.
    receiver = await startMerchantServer(() => (acceptWebhooks ? 200 : 500));
    worker = createOutboxWorker({
      db: db.pool,
      deliver: createWebhookDelivery({ timeoutMs: 5000 }),
      url: receiver.url,
      secret: 'browser-webhook-secret',
      maxAttempts: 1,
      backoffBaseSeconds: 0,
      backoffCapSeconds: 0,
    });
    expect((await worker.runOnce()).dead).to.equal(1);
    deadId = String((await db.pool.query(`SELECT id FROM outbox WHERE state = 'dead'`)).rows[0].id);

    app = await buildApiApp({ db: db.pool, console: { explorer: { cluster: 'localnet' } } });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
    await db?.drop();
  });

  async function logIn(name: string, isolated: boolean): Promise<WatchedPage> {
    const w = await openPage(browser, { isolated });
    await w.page.goto(`${base}/console/invoices`);
    expect(w.page.url()).to.equal(`${base}/console/login`);
    await w.page.type('#name', name);
    await w.page.type('#password', PASSWORD);
    await Promise.all([w.page.waitForNavigation(), w.page.click('button[type=submit]')]);
    expect(w.page.url()).to.equal(`${base}/console/invoices`);
    return w;
  }

  async function expectAccessible(page: Page, what: string): Promise<void> {
    const violations = await checkAccessibility(page);
    expect(violations, `${what}: ${JSON.stringify(violations, null, 1)}`).to.deep.equal([]);
  }

  it('log in; every page passes axe with no console errors; the invoice id shows as text', async () => {
    const login = await openPage(browser);
    await login.page.goto(`${base}/console/login`);
    await expectAccessible(login.page, 'login');
    const w = await logIn('alice', false);
    for (const p of ['invoices', 'exceptions', 'payouts', 'dead-letters', 'figures']) {
      await w.page.goto(`${base}/console/${p}`);
      await expectAccessible(w.page, p);
    }
    await w.page.goto(`${base}/console/invoices`);
    const text = await w.page.$eval('main', (el) => el.textContent ?? '');
    expect(text).to.include('INV-<b>7</b>');
    expect(await w.page.$('main b')).to.equal(null);
    await w.page.goto(`${base}/console/invoices/${encodeURIComponent('INV-<b>7</b>')}`);
    await expectAccessible(w.page, 'invoice');
    expect(w.problems.concat(login.problems)).to.deep.equal([]);
  });

  it('refund with a double click and from two isolated sessions: one refund payout, keyed by the receipt', async () => {
    const alice = await logIn('alice', true);
    const bob = await logIn('bob', true);
    for (const w of [alice, bob]) await w.page.goto(`${base}/console/exceptions`);
    const button = `form[action="/console/exceptions/${exceptionId}/refund"] button`;
    // A double click in one tab, and the other operator's click at the same moment.
    await Promise.all([
      alice.page.waitForNavigation(),
      alice.page.click(button, { count: 2 }),
      bob.page.waitForNavigation(),
      bob.page.click(button),
    ]);
    const refunds = (
      await db.pool.query(`SELECT merchant_payout_id FROM payouts WHERE merchant_payout_id LIKE 'refund:%'`)
    ).rows;
    expect(refunds).to.deep.equal([{ merchant_payout_id: `refund:localnet:${sig('browser-overpay')}:0:-1` }]);
    for (const w of [alice, bob]) {
      const status = await w.page.$eval('[role=status]', (el) => el.textContent ?? '');
      expect(status).to.match(/refund stored as payout|already has refund payout/);
      expect(await w.page.$(button)).to.equal(null); // no longer open: no refund button
      await expectAccessible(w.page, 'exceptions after refund');
      expect(w.problems).to.deep.equal([]);
    }
  });

  it('replay a dead letter from the console; the outbox delivers it to the loopback receiver', async () => {
    const w = await logIn('alice', true);
    await w.page.goto(`${base}/console/dead-letters`);
    acceptWebhooks = true;
    await Promise.all([
      w.page.waitForNavigation(),
      w.page.click(`form[action="/console/dead-letters/${deadId}/replay"] button`),
    ]);
    expect(await w.page.$eval('[role=status]', (el) => el.textContent ?? '')).to.include(`Dead letter ${deadId}`);
    expect((await worker.runOnce()).delivered).to.equal(1);
    expect(receiver.seen.filter((r) => r.topic !== '').length).to.equal(2); // the 500, then the 200
    expect(new Set(receiver.seen.map((r) => r.idempotencyKey)).size).to.equal(1);
    await w.page.reload();
    const text = await w.page.$eval('main', (el) => el.textContent ?? '');
    expect(text).to.include('No dead letters.');
    expect(text).to.include('Recently delivered');
    await w.page.goto(`${base}/console/exceptions`);
    await w.page.setViewport({ width: 1280, height: 720 });
    await w.page.screenshot({ path: SCREENSHOT });
    expect(w.problems).to.deep.equal([]);
  });
});
