// The payer's checkout page in a real browser (Debian's chromium via puppeteer-core, testkit/browser.ts), end to end
// on real parts: an SPL invoice created through the merchant API (POST /v1/invoices, the mint's decimals read from
// the chain), paid on `oncepay localnet` (LiteSVM behind our RPC) by a transfer built from the Solana Pay URL the way
// a wallet builds it (parseURL; transferChecked to the recipient's associated token account, the reference key
// appended read-only), and credited by the indexer's scanner running in-process against that localnet and the same
// PostgreSQL (finalized blocks only). The page turns *paid* without a reload (server-sent events); a second payment
// shows the exception text; axe finds no violations and the page has no console errors. Without JavaScript the
// amount, the QR code and the wallet link are in the HTML, and a reload shows the status. The run writes
// docs/img/checkout.png.
import { expect } from 'chai';
import * as net from 'node:net';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'puppeteer-core';
import { Keypair, PublicKey } from '@solana/web3.js';
import { parseURL, TransferRequestURL } from '@solana/pay';
import { createAssociatedTokenAccountIdempotentInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { buildApiApp } from '../../app/api/build-api-app';
import { hashApiKey } from '../../app/api/api-key-auth';
import { mintDecimalsFromChain } from '../../app/invoice/mint-decimals-rpc';
import { insertMerchant } from '../../app/merchant/store';
import { address } from '../../app/types';
import { createLedger } from '../../indexer/ledger';
import { decodeBlock } from '../../indexer/decode';
import { createRpcClient } from '../../indexer/rpc';
import { createScanner } from '../../indexer/source/scanner';
import { checkAccessibility, launchBrowser, openPage, WatchedPage } from '../../testkit/browser';
import { airdrop, mintWithSource, payInstruction, send } from '../../testkit/cluster';
import { startTestNode, TestNode } from '../../testkit/node';
import { createTestDb, TestDb } from '../../testkit/test-db';

const KEY = 'browser-checkout-key-0123456789';
const SCREENSHOT = path.join(__dirname, '..', '..', 'docs', 'img', 'checkout.png');
const CLUSTER = 'localnet';
const DECIMALS = 6;

/** A free loopback port, so the API can be told its public URL (the checkout link is absolute) before it listens. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

describe('browser: the checkout page, paid on localnet (chromium)', function () {
  this.timeout(240_000);
  let node: TestNode;
  let db: TestDb;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let scanning: Promise<unknown>;
  const stopScanner = new AbortController();
  const payer = Keypair.generate();
  const wallet = Keypair.generate(); // the merchant's receiving wallet
  let mint: PublicKey;
  let source: PublicKey;
  let invoice: { checkoutUrl: string; paymentUrl: string; reference: string; recipient: string };

  before(async () => {
    node = await startTestNode({ slotMs: 20, finalityDepth: 4 });
    db = await createTestDb('browser_checkout');
    const connection = node.connection();
    await airdrop(connection, payer.publicKey, 10_000_000_000);
    ({ mint, source } = await mintWithSource(connection, payer, DECIMALS, 1_000_000_000n));
    // The merchant's wallet holds the mint at its associated token account, where a wallet pays.
    await send(
      connection,
      [
        createAssociatedTokenAccountIdempotentInstruction(
          payer.publicKey,
          getAssociatedTokenAddressSync(mint, wallet.publicKey),
          wallet.publicKey,
          mint,
        ),
      ],
      [payer],
    );
    const fromSlot = await connection.getSlot('finalized');
    const pk = () => address(Keypair.generate().publicKey);
    await insertMerchant(db.pool, {
      name: 'shop',
      apiKeyHash: hashApiKey(KEY),
      programId: pk(),
      merchantAddress: pk(),
      vault: pk(),
      receivingAddress: address(wallet.publicKey),
    });

    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await buildApiApp({
      db: db.pool,
      invoices: { readMintDecimals: mintDecimalsFromChain(connection), publicUrl: base },
    });
    await app.listen({ host: '127.0.0.1', port });

    // The indexer: the scanner, in-process, reading the node's finalized blocks into the same database.
    const scanner = createScanner(
      {
        rpc: createRpcClient({ url: node.url }),
        ledger: createLedger({ db: db.pool }),
        decode: (block, slot) => decodeBlock(block, { slot, cluster: CLUSTER }),
      },
      {
        cluster: CLUSTER,
        commitment: 'finalized',
        rescanWindow: 32,
        fromSlot,
        maxSlotsPerPass: 5000,
        chunkSize: 16,
        concurrency: 2,
        pollMs: 50,
      },
    );
    scanning = scanner.run({ signal: stopScanner.signal });
    browser = await launchBrowser();
  });
  after(async () => {
    stopScanner.abort();
    await scanning?.catch(() => undefined);
    await browser?.close();
    await app?.close();
    await node?.stop();
    await db?.drop();
  });

  /** Pays the invoice as a wallet would: everything it needs comes from the Solana Pay URL. */
  async function payFromUrl(): Promise<void> {
    const url = parseURL(invoice.paymentUrl) as TransferRequestURL;
    const splToken = url.splToken!;
    const amount = BigInt(url.amount!.shiftedBy(DECIMALS).toFixed(0));
    const ix = payInstruction({
      from: source,
      mint: splToken,
      to: getAssociatedTokenAddressSync(splToken, url.recipient),
      owner: payer.publicKey,
      amount,
      decimals: DECIMALS,
      reference: url.reference![0],
    });
    await send(node.connection(), [ix], [payer]);
  }

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
    const res = await fetch(`${base}/v1/invoices`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': 'browser-checkout-1',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        invoiceId: 'order-42',
        amount: '12500000',
        mint: mint.toBase58(),
        label: 'Coffee & <cake>',
        message: 'Thank you for your order',
      }),
    });
    expect(res.status).to.equal(201);
    invoice = (await res.json()) as typeof invoice;
    expect(invoice.recipient).to.equal(wallet.publicKey.toBase58());
    expect(invoice.checkoutUrl.startsWith(`${base}/pay/`)).to.equal(true);
    expect(invoice.checkoutUrl).not.to.include('order-42');
    const url = parseURL(invoice.paymentUrl) as TransferRequestURL;
    expect(url.amount!.toFixed()).to.equal('12.5');
    expect(url.splToken!.toBase58()).to.equal(mint.toBase58());
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
    const credited = await db.pool.query(
      `SELECT count(*)::int AS n, coalesce(sum(amount), 0)::text AS s FROM receipts WHERE mint = $1`,
      [mint.toBase58()],
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

    const api = await fetch(`${base}/v1/invoices/order-42`, { headers: { authorization: `Bearer ${KEY}` } });
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
});
