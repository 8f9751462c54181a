// The payer's checkout page in a real browser (Debian's chromium via puppeteer-core, testkit/browser.ts), end to end
// on real parts (tests/browser/localnet-shop.ts): an SPL invoice created through the merchant API (POST /v1/invoices,
// the mint's decimals read from the chain), paid on `oncepay localnet` (LiteSVM behind our RPC) by a transfer built
// from the Solana Pay URL the way a wallet builds it (parseURL; transferChecked to the recipient's associated token
// account, the reference key appended read-only), and credited by the indexer's scanner running in-process against
// that localnet and the same PostgreSQL (finalized blocks only). The page turns *paid* without a reload (server-sent
// events); a second payment shows the exception text; axe finds no violations and the page has no console errors.
// Without JavaScript the amount, the QR code and the wallet link are in the HTML, and a reload shows the status. The
// run's screenshot is the README's docs/img/checkout.png with ONCEPAY_SCREENSHOT_DIR=docs/img.
// tests/browser/console.test.ts goes on from there: the second payment's exception refunded from the console and paid
// back once on chain.
import { expect } from 'chai';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'puppeteer-core';
import { parseURL, TransferRequestURL } from '@solana/pay';
import { checkAccessibility, launchBrowser, openPage, screenshotPath, WatchedPage } from '../../testkit/browser';
import { ApiInvoice, LocalnetShop, startLocalnetShop } from './localnet-shop';

/** The README's image when ONCEPAY_SCREENSHOT_DIR=docs/img (testkit/browser.ts). */
const SCREENSHOT = screenshotPath('checkout.png');

describe('browser: the checkout page, paid on localnet (chromium)', function () {
  this.timeout(240_000);
  let shop: LocalnetShop;
  let browser: Browser;
  let invoice: ApiInvoice;

  before(async () => {
    shop = await startLocalnetShop('browser_checkout');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await shop?.stop();
  });

  const payFromUrl = () => shop.payFromUrl(invoice.paymentUrl);

  async function statusBecomes(page: Page, status: string): Promise<string> {
    // The DOM, as the page's script changes it: no reload, no polling of ours.
    await page.waitForSelector(`main[data-status="${status}"]`, { timeout: 90_000 });
    return page.$eval('#status', (el) => el.textContent ?? '');
  }

  async function expectAccessible(w: WatchedPage, what: string): Promise<void> {
    const violations = await checkAccessibility(w.page);
    expect(violations, `${what}: ${JSON.stringify(violations, null, 1)}`).to.deep.equal([]);
  }

  it('an SPL invoice created through the API: its checkout link and Solana Pay URL', async () => {
    invoice = await shop.createInvoice(
      {
        invoiceId: 'order-42',
        amount: '12500000',
        mint: shop.m.mint.toBase58(),
        label: 'Coffee & <cake>',
        message: 'Thank you for your order',
      },
      'browser-checkout-1',
    );
    expect(invoice.recipient).to.equal(shop.wallet.toBase58());
    expect(invoice.checkoutUrl.startsWith(`${shop.base}/pay/`)).to.equal(true);
    expect(invoice.checkoutUrl).not.to.include('order-42');
    const url = parseURL(invoice.paymentUrl) as TransferRequestURL;
    expect(url.amount!.toFixed()).to.equal('12.5');
    expect(url.splToken!.toBase58()).to.equal(shop.m.mint.toBase58());
    expect(url.reference![0].toBase58()).to.equal(invoice.reference);
  });

  it('without JavaScript: amount, QR code and wallet link in the HTML; a reload after payment says paid', async () => {
    const plain = await openPage(browser, { isolated: true });
    await plain.page.setJavaScriptEnabled(false);
    await plain.page.goto(invoice.checkoutUrl);
    expect(await plain.page.$eval('.amount', (el) => el.textContent ?? '')).to.include('12.5');
    expect(await plain.page.$('figure.qr svg')).to.not.equal(null);
    expect(await plain.page.$eval('a.wallet', (el) => el.getAttribute('href'))).to.equal(invoice.paymentUrl);
    expect(await plain.page.$eval('#status', (el) => el.textContent ?? '')).to.equal('Waiting for payment');
    // The label is the merchant's text, shown as text.
    expect(await plain.page.$eval('h1', (el) => el.textContent ?? '')).to.equal('Pay Coffee & <cake>');
    expect(await plain.page.$('h1 cake')).to.equal(null);

    // The live page, open while the payer pays.
    const live = await openPage(browser);
    await live.page.goto(invoice.checkoutUrl);
    await expectAccessible(live, 'checkout, open');
    await payFromUrl();
    // No reload: the status is pushed when the scanner's ledger credit commits at finality.
    expect(await statusBecomes(live.page, 'paid')).to.equal('Paid');
    const credited = await shop.db.pool.query(
      `SELECT count(*)::int AS n, coalesce(sum(amount), 0)::text AS s FROM receipts WHERE mint = $1`,
      [shop.m.mint.toBase58()],
    );
    expect(credited.rows[0]).to.deep.equal({ n: 1, s: '12500000' });
    await expectAccessible(live, 'checkout, paid');
    await live.page.setViewport({ width: 800, height: 900 });
    await live.page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(live.problems).to.deep.equal([]);

    await plain.page.reload();
    expect(await plain.page.$eval('#status', (el) => el.textContent ?? '')).to.equal('Paid');
    expect(await plain.page.$eval('main', (el) => el.getAttribute('data-status'))).to.equal('paid');
    expect(plain.problems).to.deep.equal([]);

    const api = await fetch(`${shop.base}/v1/invoices/order-42`, {
      headers: { authorization: `Bearer ${shop.apiKey}` },
    });
    const view = (await api.json()) as { status: string; creditedAmount: string };
    expect(view).to.include({ status: 'paid', creditedAmount: '12500000' });
  });

  it('paid again: the page shows the exception, pushed, with no console errors', async () => {
    const live = await openPage(browser, { isolated: true });
    await live.page.goto(invoice.checkoutUrl);
    expect(await live.page.$eval('#status', (el) => el.textContent ?? '')).to.equal('Paid');
    await payFromUrl();
    expect(await statusBecomes(live.page, 'exception')).to.equal(
      'Overpaid / late payment: the merchant will be notified',
    );
    await expectAccessible(live, 'checkout, exception');
    expect(live.problems).to.deep.equal([]);
  });

  it('behind a proxy that serves the API under a path prefix: stylesheet, script and the pushed status all arrive', async () => {
    const proxy = await startPrefixProxy('/shop', shop.base);
    try {
      const second = await shop.createInvoice(
        { invoiceId: 'order-43', amount: '2500000', mint: shop.m.mint.toBase58(), label: 'Tea' },
        'browser-checkout-2',
      );
      const live = await openPage(browser, { isolated: true });
      await live.page.goto(`${proxy.base}/shop${new URL(second.checkoutUrl).pathname}`);
      // The stylesheet came through the prefix (the card's rounded corners are its rule).
      expect(await live.page.evaluate("getComputedStyle(document.querySelector('main')).borderRadius")).to.equal(
        '12px',
      );
      expect(await live.page.$eval('#status', (el) => el.textContent ?? '')).to.equal('Waiting for payment');
      await shop.payFromUrl(second.paymentUrl);
      // The script and its event stream came through it too: the status is pushed, no reload.
      expect(await statusBecomes(live.page, 'paid')).to.equal('Paid');
      expect(live.problems).to.deep.equal([]);
      // Every request the page made went under the prefix.
      expect(proxy.paths.filter((p) => !p.startsWith('/shop/pay/'))).to.deep.equal([]);
    } finally {
      await proxy.close();
    }
  });
});

/** A reverse proxy on loopback serving `target` under `prefix` (stripped before forwarding), streaming answers. */
async function startPrefixProxy(
  prefix: string,
  target: string,
): Promise<{ base: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    paths.push(url);
    if (!url.startsWith(`${prefix}/`)) {
      res.writeHead(404).end();
      return;
    }
    const upstream = http.request(
      new URL(url.slice(prefix.length), target),
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
