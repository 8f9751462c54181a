import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { parseURL, TransferRequestURL } from '@solana/pay';
import { OncePay, OncepayError, RegisteredMerchant } from '../../sdk';
import { createTestDb, TestDb } from '../../testkit/test-db';
import { createLedger } from '../../indexer/ledger';
import { baseUnits } from '../../common/amount';
import { getInvoice } from '../../app/invoice/store';
import { invoiceView } from '../../app/invoice/view';
import { until } from '../../testkit/until';

describe('sdk invoices: createInvoice, getInvoice, listInvoices, waitForPayment (real PostgreSQL)', () => {
  let db: TestDb;
  let op: OncePay;
  let shop: RegisteredMerchant;
  let other: RegisteredMerchant;
  const wallet = Keypair.generate().publicKey.toBase58();

  before(async () => {
    db = await createTestDb('sdk_invoices');
    op = OncePay.connect({ databaseUrl: db.url, schema: db.schema });
    const pk = () => Keypair.generate().publicKey;
    shop = (
      await op.registerMerchant({
        name: 'shop',
        merchant: pk(),
        vault: pk(),
        tokenProgram: pk(),
        receivingAddress: wallet,
      })
    ).merchant;
    other = (await op.registerMerchant({ name: 'other', merchant: pk(), vault: pk(), tokenProgram: pk() })).merchant;
  });
  after(async () => {
    await op?.close();
    await db?.drop();
  });

  const pay = async (reference: string, signature: string, amount: string) =>
    createLedger({ db: db.pool }).applyBatch({
      cluster: 'localnet',
      source: 'file',
      receipts: [
        {
          signature,
          slot: 9n,
          blockTime: null,
          ixIndex: 0,
          innerIndex: -1,
          program: 'system',
          kind: 'systemTransfer',
          mint: 'SOL',
          source: Keypair.generate().publicKey.toBase58(),
          destination: wallet,
          destinationOwner: wallet,
          amount: baseUnits(amount),
          accountKeys: [reference],
          references: [reference],
        },
      ],
    });

  it('creates once per invoiceId: the same terms return the stored invoice, other terms are refused', async () => {
    const a = await op.createInvoice(shop, {
      invoiceId: 'order-1',
      amount: 2_500_000_000n,
      mint: 'SOL',
      label: 'Shop',
    });
    expect(a.created).to.equal(true);
    expect(a.invoice).to.include({ status: 'open', amountTokens: '2.5', recipient: wallet, creditedAmount: 0n });
    expect(a.invoice.checkoutPath).to.match(/^\/pay\/[A-Za-z0-9_-]{32}$/);
    const url = parseURL(a.invoice.paymentUrl) as TransferRequestURL;
    expect(url.amount!.toFixed()).to.equal('2.5');
    expect(url.reference![0].toBase58()).to.equal(a.invoice.reference);
    const again = await op.createInvoice(shop, {
      invoiceId: 'order-1',
      amount: 2_500_000_000n,
      mint: 'SOL',
      label: 'Shop',
    });
    expect(again.created).to.equal(false);
    expect(again.invoice.reference).to.equal(a.invoice.reference);
    expect(again.invoice.paymentUrl).to.equal(a.invoice.paymentUrl);
    let err: unknown;
    try {
      await op.createInvoice(shop, { invoiceId: 'order-1', amount: 1n, mint: 'SOL' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(OncepayError);
    expect((err as OncepayError).code).to.equal('ONCEPAY__INVOICE__ID_EXISTS');
    expect(await op.getInvoice(other, 'order-1')).to.equal(null);
  });

  it('waitForPayment resolves when the ledger credits the invoice in full', async () => {
    const { invoice } = await op.createInvoice(shop, { invoiceId: 'order-2', amount: 100n, mint: 'SOL' });
    const waiting = op.waitForPayment(shop, 'order-2', { pollIntervalMs: 20 });
    await pay(invoice.reference, 'B'.repeat(88), '100');
    const paid = await waiting;
    expect(paid).to.include({ status: 'paid', creditedAmount: 100n });
    expect(paid.receipts.map((r) => [r.signature, r.amount])).to.deep.equal([['B'.repeat(88), 100n]]);
    expect(paid.fulfilment).to.not.equal(null);
  });

  it('waitForPayment rejects on expiry and on abort', async () => {
    await op.createInvoice(shop, {
      invoiceId: 'order-3',
      amount: 1n,
      mint: 'SOL',
      expiresAt: new Date(Date.now() + 60_000),
    });
    await db.pool.query(`UPDATE api_invoices SET expires_at = now() WHERE invoice_id = 'order-3'`);
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: OncepayError) => e.code,
      );
    expect(await codeOf(op.waitForPayment(shop, 'order-3'))).to.equal('ONCEPAY__INVOICE__EXPIRED');
    await op.createInvoice(shop, { invoiceId: 'order-4', amount: 1n, mint: 'SOL' });
    const ac = new AbortController();
    const waiting = codeOf(op.waitForPayment(shop, 'order-4', { signal: ac.signal, pollIntervalMs: 10 }));
    ac.abort();
    expect(await waiting).to.equal('ONCEPAY__INVOICE__ABORTED');
  });

  it('lists newest first, page by page, with a status filter', async () => {
    const first = await op.listInvoices(shop, { limit: 3 });
    expect(first.data.map((i) => i.invoiceId)).to.deep.equal(['order-4', 'order-3', 'order-2']);
    const second = await op.listInvoices(shop, { limit: 3, cursor: first.nextCursor! });
    expect(second.data.map((i) => i.invoiceId)).to.deep.equal(['order-1']);
    expect(second.nextCursor).to.equal(null);
    expect((await op.listInvoices(shop, { status: 'paid' })).data.map((i) => i.invoiceId)).to.deep.equal(['order-2']);
    expect((await op.listInvoices(other)).data).to.deep.equal([]);
  });

  it("is the API's view of the invoice (app/invoice/view.ts) with bigint amounts and Date times, no row id", async () => {
    const expiresAt = new Date(Date.now() + 3_600_000);
    const { invoice } = await op.createInvoice(shop, {
      invoiceId: 'order-view',
      amount: 18_446_744_073_709_551_615n,
      mint: 'SOL',
      label: 'Shop',
      memo: 'm',
      expiresAt,
    });
    const v = invoiceView((await getInvoice(db.pool, shop.id, 'order-view'))!, undefined);
    const { id, amount, creditedAmount, checkoutUrl, createdAt, paidAt, expiresAt: expiry, ...same } = v;
    expect(invoice).to.include(same);
    expect(invoice).to.not.have.property('id');
    expect(id).to.be.a('string');
    expect([invoice.amount, invoice.creditedAmount]).to.deep.equal([BigInt(amount), BigInt(creditedAmount)]);
    expect(invoice.amount).to.equal(18_446_744_073_709_551_615n);
    expect(invoice.checkoutPath).to.equal(checkoutUrl);
    expect(invoice.expiresAt).to.be.instanceOf(Date);
    expect(invoice.expiresAt!.toISOString()).to.equal(expiry).and.to.equal(expiresAt.toISOString());
    expect(invoice.createdAt).to.be.instanceOf(Date);
    expect(invoice.createdAt.toISOString()).to.equal(createdAt);
    expect([invoice.paidAt, paidAt]).to.deep.equal([null, null]);
    expect([invoice.receipts, invoice.exceptions]).to.deep.equal([[], []]);
  });

  it('waitForPayment is woken by the ledger commit (NOTIFY), not by its poll; one LISTEN connection for every waiter', async () => {
    // A poll far beyond the test's timeout: only the notification of the credit can resolve these in time.
    const hour = { pollIntervalMs: 3_600_000 };
    const made = await Promise.all(
      ['order-push-1', 'order-push-2'].map((invoiceId) =>
        op.createInvoice(shop, { invoiceId, amount: 7n, mint: 'SOL' }),
      ),
    );
    const waiting = made.map(({ invoice }) => op.waitForPayment(shop, invoice.invoiceId, hour));
    const listeners = async () =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'oncepay-sdk' AND query ILIKE 'LISTEN%oncepay_invoice_changed%'`,
        )
      ).rows[0].n;
    await until('the waiters’ LISTEN connection', async () => (await listeners()) === 1, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    await pay(made[0].invoice.reference, 'D'.repeat(88), '7');
    await pay(made[1].invoice.reference, 'E'.repeat(88), '7');
    const paid = await Promise.all(waiting);
    expect(paid.map((i) => [i.invoiceId, i.status, i.creditedAmount])).to.deep.equal([
      ['order-push-1', 'paid', 7n],
      ['order-push-2', 'paid', 7n],
    ]);
    expect(await listeners()).to.equal(1);
  });
});
