// The operator console in a real browser (Debian's chromium via puppeteer-core, testkit/browser.ts) against the real
// API app on loopback, a real PostgreSQL and `oncepay localnet` running the compiled payout program
// (tests/browser/localnet-shop.ts): the story of tests/browser/checkout.test.ts, carried on to the money going back.
// An invoice created through the API is paid twice by transfers built from its Solana Pay URL; the scanner credits
// the first and keeps the second as the invoice's exception. Two operators' isolated sessions refund it at once (a
// double click in one, a click in the other): ONE refund payout is stored, keyed by the receipt. Two payout workers
// then race to pay it against the localnet, and the chain shows exactly one refund: the payer's token account up by
// the exception's amount once, the merchant's vault down by it once, one op account (the only one the program
// holds) and one successful transaction on it; a second pass pays nothing more, and the payouts page shows the proof.
// A dead letter made by a real outbox worker (the paid invoice's webhook, answered 500 by a loopback receiver) is
// replayed from the console and delivered. Every page passes axe-core with no console errors; the run's
// screenshot (the exceptions page after the refund) is docs/img/console.png with ONCEPAY_SCREENSHOT_DIR=docs/img.
import { expect } from 'chai';
import type { Browser, Page } from 'puppeteer-core';
import { PublicKey } from '@solana/web3.js';
import { addConsoleOperator } from '../../app/console/operators';
import { refundPayoutId } from '../../app/exception/refund-id';
import { listExceptions } from '../../app/exception/store';
import type { ExceptionRow } from '../../app/exception/types';
import { createConnectionChain } from '../../app/payout/chain';
import { OP_ACCOUNT_DISCRIMINATOR } from '../../app/payout/program';
import { runPayout } from '../../app/payout/run-payout';
import { FINAL_STATES, getPayout, PayoutRow } from '../../app/payout/store';
import { startPayoutWorker } from '../../app/payout/worker';
import { createOutboxWorker } from '../../indexer/outbox';
import { createWebhookDelivery } from '../../indexer/delivery';
import { checkAccessibility, launchBrowser, openPage, screenshotPath, WatchedPage } from '../../testkit/browser';
import { successfulOpTransactions, tokenBalance } from '../../testkit/payout/setup';
import { until } from '../../testkit/until';
import { startMerchantServer, MerchantServer } from '../indexer/outbox/merchant-server';
import { ApiInvoice, LocalnetShop, startLocalnetShop } from './localnet-shop';

const PASSWORD = 'browser operator password';
/** The README's image when ONCEPAY_SCREENSHOT_DIR=docs/img (testkit/browser.ts). */
const SCREENSHOT = screenshotPath('console.png');
// An attacker-chosen invoice id with markup: the pages must show it as text.
const INVOICE_ID = 'INV-<b>7</b>';
const AMOUNT = 1_500_000n; // 1.5 tokens, paid twice: the second payment is the exception

describe('browser: the operator console, refunding on localnet (chromium)', function () {
  this.timeout(240_000);
  let shop: LocalnetShop;
  let browser: Browser;
  let receiver: MerchantServer;
  let invoice: ApiInvoice;
  let ledgerInvoiceId: string;
  let exception: ExceptionRow;
  let secondPayment: string;
  let deadId: string;
  let acceptWebhooks = false;
  let worker: ReturnType<typeof createOutboxWorker>;
  /** Token balances just before the refund is paid: the payer's account (the refund's recipient) and the vault. */
  let balances: { payer: bigint; vault: bigint };

  const waitFor = <T>(what: string, f: () => Promise<T | null | undefined | false>) =>
    until(what, f, { timeoutMs: 90_000, intervalMs: 50 });

  before(async () => {
    shop = await startLocalnetShop('browser_console', { console: { explorer: { cluster: 'localnet' } } });
    const db = shop.db.pool;
    await addConsoleOperator(db, 'alice', { password: PASSWORD });
    await addConsoleOperator(db, 'bob', { password: PASSWORD });
    invoice = await shop.createInvoice(
      { invoiceId: INVOICE_ID, amount: AMOUNT.toString(), mint: shop.m.mint.toBase58() },
      'browser-console-1',
    );
    ledgerInvoiceId = `api:${shop.merchant.id}:${INVOICE_ID}`;
    // Paid, then paid again: the scanner credits the first at finality and keeps the second as an exception.
    await shop.payFromUrl(invoice.paymentUrl);
    await waitFor('the invoice paid', async () => {
      const r = await db.query(`SELECT status FROM invoices WHERE id = $1`, [ledgerInvoiceId]);
      return r.rows[0]?.status === 'paid';
    });
    secondPayment = await shop.payFromUrl(invoice.paymentUrl);
    exception = await waitFor('the second payment kept as an exception', async () =>
      (await listExceptions(db, { invoiceId: ledgerInvoiceId })).find((e) => e.receipt.signature === secondPayment),
    );
    expect(exception).to.deep.include({ amount: AMOUNT, state: 'open' });
    expect(exception.receipt.source).to.equal(shop.payerAccount.toBase58());

    // A dead letter, the real way: the outbox worker's only attempt to deliver invoice.paid gets a 500.
    receiver = await startMerchantServer(() => (acceptWebhooks ? 200 : 500));
    worker = createOutboxWorker({
      db,
      deliver: createWebhookDelivery({ timeoutMs: 5000 }),
      url: receiver.url,
      secret: 'browser-webhook-secret',
      maxAttempts: 1,
      backoffBaseSeconds: 0,
      backoffCapSeconds: 0,
    });
    expect((await worker.runOnce()).dead).to.equal(1);
    deadId = String((await db.query(`SELECT id FROM outbox WHERE state = 'dead'`)).rows[0].id);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await shop?.stop();
  });

  async function logIn(name: string, isolated: boolean): Promise<WatchedPage> {
    const w = await openPage(browser, { isolated });
    await w.page.goto(`${shop.base}/console/invoices`);
    expect(w.page.url()).to.equal(`${shop.base}/console/login`);
    await w.page.type('#name', name);
    await w.page.type('#password', PASSWORD);
    await Promise.all([w.page.waitForNavigation(), w.page.click('button[type=submit]')]);
    expect(w.page.url()).to.equal(`${shop.base}/console/invoices`);
    return w;
  }

  async function expectAccessible(page: Page, what: string): Promise<void> {
    const violations = await checkAccessibility(page);
    expect(violations, `${what}: ${JSON.stringify(violations, null, 1)}`).to.deep.equal([]);
  }

  /** Every refund payout stored (one is right; more would be a second refund of the same money). */
  async function refundPayouts(): Promise<PayoutRow[]> {
    const ids = await shop.db.pool.query(`SELECT id FROM payouts WHERE merchant_payout_id LIKE 'refund:%' ORDER BY id`);
    return Promise.all(ids.rows.map(async (r) => (await getPayout(shop.db.pool, String(r.id)))!));
  }

  it('log in; every page passes axe with no console errors; the invoice id shows as text', async () => {
    const login = await openPage(browser);
    await login.page.goto(`${shop.base}/console/login`);
    await expectAccessible(login.page, 'login');
    const w = await logIn('alice', false);
    for (const p of ['invoices', 'exceptions', 'payouts', 'dead-letters', 'figures']) {
      await w.page.goto(`${shop.base}/console/${p}`);
      await expectAccessible(w.page, p);
    }
    await w.page.goto(`${shop.base}/console/invoices`);
    const text = await w.page.$eval('main', (el) => el.textContent ?? '');
    expect(text).to.include(INVOICE_ID);
    expect(await w.page.$('main b')).to.equal(null);
    await w.page.goto(`${shop.base}/console/invoices/${encodeURIComponent(ledgerInvoiceId)}`);
    await expectAccessible(w.page, 'invoice');
    expect(w.problems.concat(login.problems)).to.deep.equal([]);
  });

  it('refund the real second payment with a double click and from two isolated sessions: one refund payout, keyed by the receipt', async () => {
    const alice = await logIn('alice', true);
    const bob = await logIn('bob', true);
    for (const w of [alice, bob]) await w.page.goto(`${shop.base}/console/exceptions`);
    const button = `form[action="/console/exceptions/${exception.id}/refund"] button`;
    // A double click in one tab, and the other operator's click at the same moment.
    await Promise.all([
      alice.page.waitForNavigation(),
      alice.page.click(button, { count: 2 }),
      bob.page.waitForNavigation(),
      bob.page.click(button),
    ]);
    const refunds = await refundPayouts();
    expect(refunds.map((p) => p.merchantPayoutId)).to.deep.equal([refundPayoutId(exception.receipt)]);
    expect(refunds[0]).to.deep.include({
      merchantId: shop.merchant.id,
      recipientToken: shop.payerAccount.toBase58(),
      amount: AMOUNT,
      state: 'pending',
    });
    for (const w of [alice, bob]) {
      const status = await w.page.$eval('[role=status]', (el) => el.textContent ?? '');
      expect(status).to.match(/refund stored as payout|already has refund payout/);
      expect(await w.page.$(button)).to.equal(null); // no longer open: no refund button
      await expectAccessible(w.page, 'exceptions after refund');
      expect(w.problems).to.deep.equal([]);
    }
  });

  it('two payout workers race to pay it: exactly one refund on chain; a second pass pays nothing; the payouts page shows the proof', async () => {
    const { connection, m } = shop;
    balances = {
      payer: await tokenBalance(connection, shop.payerAccount),
      vault: await tokenBalance(connection, m.vault),
    };
    const deps = { chain: createConnectionChain({ connection }), authority: m.authority, pollIntervalMs: 20 };
    const workers = ['w1', 'w2'].map((name) =>
      startPayoutWorker({ ...deps, db: shop.db.pool, concurrency: 1, idleMs: 20, rebroadcastIntervalMs: 100, name }),
    );
    try {
      await waitFor('every refund payout finished', async () => {
        const all = await refundPayouts();
        return all.length > 0 && all.every((p) => FINAL_STATES.includes(p.state));
      });
    } finally {
      await Promise.all(workers.map((w) => w.stop({ graceMs: 5_000 })));
    }
    const expectOneRefundOnChain = async () => {
      // The money first: back to the payer once, out of the vault once (what a second refund would break).
      expect(await tokenBalance(connection, shop.payerAccount), 'payer').to.equal(balances.payer + AMOUNT);
      expect(await tokenBalance(connection, m.vault), 'vault').to.equal(balances.vault - AMOUNT);
      const [refund, ...more] = await refundPayouts();
      expect(more, 'refund payouts beyond the first').to.deep.equal([]);
      expect(refund.state).to.equal('succeeded');
      // The proof: the refund's op account exists (the program's), it is the only op account the program holds, and
      // one successful transaction touched it: the one the journal recorded.
      const op = await connection.getAccountInfo(new PublicKey(refund.opPda), 'confirmed');
      expect(op?.owner.toBase58()).to.equal(m.programId.toBase58());
      const ops = await connection.getProgramAccounts(m.programId, {
        commitment: 'confirmed',
        filters: [{ memcmp: { offset: 0, bytes: OP_ACCOUNT_DISCRIMINATOR.toString('base64'), encoding: 'base64' } }],
      });
      expect(ops.map((a) => a.pubkey.toBase58())).to.deep.equal([refund.opPda]);
      expect(await successfulOpTransactions(connection, refund.opPda)).to.deep.equal([refund.resultSignature]);
      return refund;
    };
    const refund = await expectOneRefundOnChain();

    // A second pass over the same row (a worker finding it again, a resume): it settles from the chain, pays nothing.
    await runPayout(refund, { ...deps, db: shop.db.pool });
    await expectOneRefundOnChain();

    const w = await logIn('alice', true);
    await w.page.goto(`${shop.base}/console/payouts/${refund.id}`);
    const text = await w.page.$eval('main', (el) => el.textContent ?? '');
    expect(text).to.include(refund.merchantPayoutId);
    expect(text).to.include('succeeded');
    expect(text).to.include(refund.opPda);
    expect(text).to.include(refund.resultSignature!);
    await expectAccessible(w.page, 'refund payout');
    await w.page.goto(`${shop.base}/console/exceptions`);
    expect(await w.page.$eval('main td.state', (el) => el.textContent ?? '')).to.equal('refunded');
    expect(w.problems).to.deep.equal([]);
  });

  it('replay a dead letter from the console; the outbox delivers it to the loopback receiver', async () => {
    const w = await logIn('alice', true);
    await w.page.goto(`${shop.base}/console/dead-letters`);
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
    await w.page.goto(`${shop.base}/console/exceptions`);
    await w.page.setViewport({ width: 1280, height: 720 });
    await w.page.screenshot({ path: SCREENSHOT });
    expect(w.problems).to.deep.equal([]);
  });
});
