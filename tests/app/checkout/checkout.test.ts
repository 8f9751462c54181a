import { expect } from 'chai';
import { FastifyInstance } from 'fastify';
import { Keypair } from '@solana/web3.js';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { buildApiApp } from '../../../app/api/build-api-app';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { insertMerchant } from '../../../app/merchant/store';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { address } from '../../../app/types';
import { createLedger } from '../../../indexer/ledger';
import { baseUnits } from '../../../common/amount';
import { checkoutPageHtml, escapeHtml } from '../../../app/checkout/page-html';
import { openCheckoutEvents } from '../../../testkit/checkout-events';

const KEY = 'test-api-key-checkout-0000001';
const pk = () => address(Keypair.generate().publicKey);

describe('app/checkout: the payer page and its live status (real PostgreSQL, LISTEN/NOTIFY)', function () {
  this.timeout(30_000);
  let db: TestDb;
  let app: FastifyInstance;
  let base: string;
  const wallet = pk();

  before(async () => {
    db = await createTestDb('app_checkout');
    await insertMerchant(db.pool, {
      name: 'Secret Merchant Name',
      apiKeyHash: hashApiKey(KEY),
      programId: address(ONCEPAY_PROGRAM_ID),
      merchantAddress: pk(),
      vault: pk(),
      receivingAddress: wallet,
    });
    app = await buildApiApp({ db: db.pool, checkout: { maxStreams: 2, heartbeatMs: 200 } });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await app?.close();
    await db?.drop();
  });

  const create = async (body: Record<string, unknown>) => {
    const r = await app.inject({
      method: 'POST',
      url: '/v1/invoices',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': 'application/json',
        'idempotency-key': String(body.invoiceId),
      },
      payload: JSON.stringify(body),
    });
    expect(r.statusCode, r.body).to.equal(201);
    return r.json() as { checkoutUrl: string; reference: string; paymentUrl: string };
  };
  const pay = (reference: string, signature: string, amount: string) =>
    createLedger({ db: db.pool }).applyBatch({
      cluster: 'localnet',
      source: 'file',
      receipts: [
        {
          signature,
          slot: 5n,
          blockTime: null,
          ixIndex: 0,
          innerIndex: -1,
          program: 'system',
          kind: 'systemTransfer',
          mint: 'SOL',
          source: pk(),
          destination: wallet,
          destinationOwner: wallet,
          amount: baseUnits(amount),
          accountKeys: [reference],
          references: [reference],
        },
      ],
    });

  it('serves plain HTML: exact amount, escaped label, inline QR, wallet link, status; strict CSP; no internals', async () => {
    const inv = await create({
      invoiceId: 'inv-secret-id',
      amount: '1500000000',
      mint: 'SOL',
      label: '<script>alert(1)</script>',
      message: 'Order "42" & <b>more</b>',
    });
    const r = await app.inject({ method: 'GET', url: inv.checkoutUrl });
    expect(r.statusCode).to.equal(200);
    expect(r.headers['content-type']).to.match(/^text\/html/);
    const csp = String(r.headers['content-security-policy']);
    expect(csp).to.include("default-src 'none'");
    expect(csp).to.include("script-src 'self'");
    expect(csp).not.to.include('unsafe-inline');
    const html = r.body;
    expect(html).to.include('<span class="value">1.5</span>');
    expect(html).not.to.include('<script>alert');
    expect(html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).to.include('Order &quot;42&quot; &amp; &lt;b&gt;more&lt;/b&gt;');
    expect(html).to.match(/<svg[^>]*>/);
    expect(html).to.include(`href="${escapeHtml(inv.paymentUrl)}"`);
    expect(html).to.include('Waiting for payment');
    // An empty icon of its own: a browser's request for /favicon.ico would answer 404 (a console error).
    expect(html).to.include('<link rel="icon" href="data:,">');
    // The only script is the same-origin one; no inline script or style.
    expect(html.match(/<script/g)).to.have.length(1);
    // Relative to the page (/pay/<id>): /pay/checkout.js here, and under a proxy's path prefix there.
    expect(html).to.include('<script src="checkout.js" defer></script>');
    expect(html).to.include('<link rel="stylesheet" href="checkout.css">');
    expect(html).not.to.match(/ style=/);
    for (const secret of ['inv-secret-id', 'Secret Merchant Name', 'api:', KEY]) expect(html).not.to.include(secret);
    const js = await app.inject({ method: 'GET', url: '/pay/checkout.js' });
    expect(js.headers['content-type']).to.match(/^text\/javascript/);
  });

  it('answers 404 for an unknown or malformed checkout id, and for a merchant invoice id', async () => {
    for (const url of [
      '/pay/' + 'A'.repeat(32),
      '/pay/inv-secret-id',
      '/pay/x/events',
      '/pay/' + 'B'.repeat(32) + '/events',
    ]) {
      const r = await app.inject({ method: 'GET', url });
      expect(r.statusCode, url).to.equal(404);
      expect(r.body).not.to.include('inv-secret-id');
    }
  });

  it('pushes paid when the ledger credits the invoice, then the exception of a second payment', async () => {
    const inv = await create({ invoiceId: 'inv-live', amount: '100', mint: 'SOL' });
    const ev = await openCheckoutEvents(`${base}${inv.checkoutUrl}/events`);
    try {
      expect(ev.res.headers['content-type']).to.match(/^text\/event-stream/);
      await ev.next('open');
      await pay(inv.reference, 'C'.repeat(88), '100');
      await ev.next('paid');
      await pay(inv.reference, 'D'.repeat(88), '100');
      await ev.next('exception');
      expect(ev.statuses).to.deep.equal(['open', 'paid', 'exception']);
      const page = await app.inject({ method: 'GET', url: inv.checkoutUrl });
      expect(page.body).to.include('Overpaid / late payment: the merchant will be notified');
    } finally {
      ev.close();
    }
  });

  it('caps the open streams per process (503 beyond), frees a slot when a stream closes, ends all on close', async () => {
    const inv = await create({ invoiceId: 'inv-cap', amount: '1', mint: 'SOL' });
    const url = `${base}${inv.checkoutUrl}/events`;
    const a = await openCheckoutEvents(url);
    const b = await openCheckoutEvents(url);
    await Promise.all([a.next('open'), b.next('open')]);
    const c = await openCheckoutEvents(url);
    expect(c.res.statusCode).to.equal(503);
    c.close();
    a.close();
    let d: Awaited<ReturnType<typeof openCheckoutEvents>> | undefined;
    for (let i = 0; i < 50 && !(d && d.res.statusCode === 200); i++) {
      d?.close();
      await new Promise((r) => setTimeout(r, 50));
      d = await openCheckoutEvents(url);
    }
    expect(d!.res.statusCode).to.equal(200);
    const ended = new Promise<void>((resolve) => d!.res.on('end', () => resolve()));
    const endedB = new Promise<void>((resolve) => b.res.on('end', () => resolve()));
    await app.close();
    await Promise.all([ended, endedB]);
  });
});

describe('app/checkout page-html (pure)', () => {
  it('escapes every merchant text, so a label cannot inject markup', () => {
    const html = checkoutPageHtml(
      {
        checkoutId: 'A'.repeat(32),
        amountTokens: '2',
        mint: 'SOL',
        label: `"><img src=x onerror=alert(1)>`,
        message: `</p><script>x()</script>`,
        paymentUrl: 'solana:abc?label=%22%3E&message=x',
        status: 'paid',
      },
      '<svg></svg>',
    );
    expect(html).not.to.include('<img');
    expect(html).not.to.include('<script>x()');
    expect(html).to.include('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(html).to.include('data-status="paid"');
    expect(html).to.include('>Paid<');
    expect(escapeHtml(`&<>"'`)).to.equal('&amp;&lt;&gt;&quot;&#39;');
  });
});
