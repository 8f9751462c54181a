import { expect } from 'chai';
import { FastifyInstance } from 'fastify';
import { Keypair } from '@solana/web3.js';
import { parseURL, TransferRequestURL } from '@solana/pay';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { buildApiApp } from '../../../app/api/build-api-app';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { insertMerchant, MerchantRow } from '../../../app/merchant/store';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { address } from '../../../app/types';
import { createLedger } from '../../../indexer/ledger';
import { baseUnits } from '../../../common/amount';

const KEY_A = 'test-api-key-invoice-a-000001';
const KEY_B = 'test-api-key-invoice-b-000002';
const KEY_C = 'test-api-key-invoice-c-000003';
const pk = () => address(Keypair.generate().publicKey);

describe('app/api invoices (POST/GET /v1/invoices, real PostgreSQL)', () => {
  let db: TestDb;
  let app: FastifyInstance;
  let a: MerchantRow;
  const walletA = pk();
  const walletB = pk();
  const mint = pk();
  const mintReads: string[] = [];

  before(async () => {
    db = await createTestDb('app_invoices');
    const merchant = (name: string, key: string, receivingAddress?: string) =>
      insertMerchant(db.pool, {
        name,
        apiKeyHash: hashApiKey(key),
        programId: address(ONCEPAY_PROGRAM_ID),
        merchantAddress: pk(),
        vault: pk(),
        receivingAddress,
      });
    a = await merchant('A', KEY_A, walletA);
    await merchant('B', KEY_B, walletB);
    await merchant('C', KEY_C); // no receiving address configured
    app = await buildApiApp({
      db: db.pool,
      invoices: {
        publicUrl: 'https://pay.example/',
        readMintDecimals: async (m) => {
          mintReads.push(m);
          return m === mint ? 6 : null;
        },
      },
    });
  });
  after(async () => {
    await app?.close();
    await db?.drop();
  });

  const post = (body: unknown, key: string, apiKey = KEY_A) =>
    app.inject({
      method: 'POST',
      url: '/v1/invoices',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
      payload: JSON.stringify(body),
    });
  const get = (url: string, apiKey = KEY_A) =>
    app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
  const counts = async () => {
    const n = async (t: string) => Number((await db.pool.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n);
    return { api: await n('api_invoices'), ledger: await n('invoices'), keys: await n('idempotency_keys') };
  };

  it('creates an SPL invoice: reference generated, receiving address used, Solana Pay URL and checkout link', async () => {
    const r = await post(
      { invoiceId: 'inv-1', amount: '1500000', mint, label: 'Café <b>', message: 'Order 42', memo: 'm-42' },
      'k-1',
    );
    expect(r.statusCode, r.body).to.equal(201);
    const v = r.json();
    expect(v).to.include({ invoiceId: 'inv-1', status: 'open', amount: '1500000', amountTokens: '1.5' });
    expect(v).to.include({ recipient: walletA, mint, decimals: 6, creditedAmount: '0' });
    expect(v.checkoutUrl).to.match(/^https:\/\/pay\.example\/pay\/[A-Za-z0-9_-]{32}$/);
    expect(v.checkoutUrl).not.to.include('inv-1');
    const url = parseURL(v.paymentUrl) as TransferRequestURL;
    expect(url.recipient.toBase58()).to.equal(walletA);
    expect(url.amount!.toFixed()).to.equal('1.5');
    expect(url.splToken!.toBase58()).to.equal(mint);
    expect(url.reference!.map((k) => k.toBase58())).to.deep.equal([v.reference]);
    expect(url).to.include({ label: 'Café <b>', message: 'Order 42', memo: 'm-42' });
    expect(v).to.include.keys('receipts', 'exceptions', 'fulfilment');
    // The ledger row the indexer matches: the generated reference and the receiving wallet.
    const l = (await db.pool.query('SELECT * FROM invoices WHERE reference_key = $1', [v.reference])).rows[0];
    expect(l).to.include({ deposit_address: walletA, mint, expected_amount: '1500000', merchant: a.id });
    expect(mintReads).to.deep.equal([mint]);
  });

  it('replays the same request, refuses another body on the key and a second invoice with the same id', async () => {
    const body = { invoiceId: 'inv-2', amount: '10', mint: 'SOL' };
    const first = await post(body, 'k-2');
    expect(first.statusCode).to.equal(201);
    const again = await post(body, 'k-2');
    expect(again.statusCode).to.equal(201);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.json()).to.deep.equal(first.json());
    const other = await post({ ...body, amount: '11' }, 'k-2');
    expect(other.statusCode).to.equal(409);
    expect(other.json().code).to.equal('IDEMPOTENCY_CONFLICT');
    const dup = await post(body, 'k-2b');
    expect(dup.statusCode).to.equal(409);
    expect(dup.json().code).to.equal('INVOICE_ID_EXISTS');
    const n = await db.pool.query(`SELECT count(*) AS n FROM api_invoices WHERE invoice_id = 'inv-2'`);
    expect(Number(n.rows[0].n)).to.equal(1);
    expect(first.json()).to.include({ amountTokens: '0.00000001', decimals: 9 });
    expect((parseURL(first.json().paymentUrl) as TransferRequestURL).splToken).to.equal(undefined);
  });

  it('reads the mint decimals from the chain once, then from the database', async () => {
    const before = mintReads.length;
    expect((await post({ invoiceId: 'inv-3', amount: '1', mint }, 'k-3')).statusCode).to.equal(201);
    expect(mintReads.length).to.equal(before);
  });

  it("keeps merchants apart: B's inv-1 is another invoice, and A never reads B's (404)", async () => {
    const rb = await post({ invoiceId: 'inv-1', amount: '5', mint: 'SOL' }, 'k-1', KEY_B);
    expect(rb.statusCode, rb.body).to.equal(201);
    expect(rb.json().recipient).to.equal(walletB);
    const rbOnly = await post({ invoiceId: 'inv-b-only', amount: '5', mint: 'SOL' }, 'k-b2', KEY_B);
    expect(rbOnly.statusCode).to.equal(201);
    expect((await get('/v1/invoices/inv-1')).json().amount).to.equal('1500000');
    expect((await get('/v1/invoices/inv-1', KEY_B)).json().amount).to.equal('5');
    const cross = await get('/v1/invoices/inv-b-only');
    expect(cross.statusCode).to.equal(404);
    expect(cross.json().code).to.equal('INVOICE_NOT_FOUND');
    const list = (await get('/v1/invoices?limit=100')).json();
    expect(list.data.map((x: { invoiceId: string }) => x.invoiceId)).not.to.include('inv-b-only');
    expect((await get('/v1/invoices/inv-1')).statusCode).to.equal(200);
    expect((await get('/v1/invoices/inv-1', 'no-such-key-000000000')).statusCode).to.equal(401);
  });

  it('refuses bad input with a stable code and changes nothing', async () => {
    const before = await counts();
    const cases: Array<[unknown, string, string?]> = [
      [{ invoiceId: 'x', amount: '1.5', mint }, 'AMOUNT_MALFORMED'],
      [{ invoiceId: 'x', amount: '0', mint }, 'AMOUNT_ZERO'],
      [{ invoiceId: 'x', amount: '18446744073709551616', mint }, 'AMOUNT_OUT_OF_RANGE'],
      [{ invoiceId: '', amount: '1', mint }, 'INVOICE_ID_MALFORMED'],
      [{ invoiceId: 'a\u0001', amount: '1', mint }, 'INVOICE_ID_MALFORMED'],
      [{ invoiceId: 'x', amount: '1', mint: 'not-a-mint' }, 'ADDRESS_MALFORMED'],
      [{ invoiceId: 'x', amount: '1', mint: pk() }, 'MINT_NOT_FOUND'],
      [{ invoiceId: 'x', amount: '1', mint, label: 'x'.repeat(101) }, 'INVOICE_TEXT_INVALID'],
      [{ invoiceId: 'x', amount: '1', mint, message: 'a\nb' }, 'INVOICE_TEXT_INVALID'],
      [{ invoiceId: 'x', amount: '1', mint, expiresAt: '2000-01-01T00:00:00Z' }, 'EXPIRY_INVALID'],
      [{ invoiceId: 'x', amount: '1', mint, expiresAt: 'tomorrow' }, 'EXPIRY_INVALID'],
      [{ invoiceId: 'x', amount: '1', mint, recipient: 'zz' }, 'ADDRESS_MALFORMED'],
      [{ invoiceId: 'x', amount: 1, mint }, 'AMOUNT_MALFORMED'],
      [{ invoiceId: 'x', amount: '1', mint, extra: 1 }, 'BODY_INVALID'],
      [{ invoiceId: 'x', amount: '1', mint }, 'RECEIVING_ADDRESS_MISSING', KEY_C],
    ];
    for (const [body, code, key] of cases) {
      const r = await post(body, `bad-${code}`, key);
      expect(r.statusCode, `${code}: ${r.body}`).to.equal(400);
      expect(r.json().code, JSON.stringify(body)).to.equal(code);
    }
    expect(await counts()).to.deep.equal(before);
  });

  it('shows what the ledger credited: receipts, the overpayment exception, the fulfilment', async () => {
    const v = (await post({ invoiceId: 'inv-paid', amount: '100', mint: 'SOL' }, 'k-paid')).json();
    const receipt = (signature: string, amount: string, slot: bigint) => ({
      signature,
      slot,
      blockTime: null,
      ixIndex: 0,
      innerIndex: -1,
      program: 'system' as const,
      kind: 'systemTransfer' as const,
      mint: 'SOL',
      source: pk(),
      destination: walletA,
      destinationOwner: walletA,
      amount: baseUnits(amount),
      accountKeys: [v.reference],
      references: [v.reference],
    });
    const sig = (c: string) => c.repeat(88);
    const ledger = createLedger({ db: db.pool });
    await ledger.applyBatch({ cluster: 'localnet', source: 'file', receipts: [receipt(sig('A'), '130', 7n)] });
    const r = (await get('/v1/invoices/inv-paid')).json();
    expect(r).to.include({ status: 'paid', creditedAmount: '100' });
    expect(r.receipts).to.deep.equal([
      {
        signature: sig('A'),
        ixIndex: 0,
        innerIndex: -1,
        slot: '7',
        amount: '130',
        mint: 'SOL',
        source: r.receipts[0].source,
        deliveredBy: 'file',
      },
    ]);
    expect(r.exceptions.map((e: { kind: string; amount: string }) => [e.kind, e.amount])).to.deep.equal([
      ['overpayment', '30'],
    ]);
    expect(r.fulfilment).to.include({ delivery: 'pending', attempts: 0 });
    expect(r.paidAt).to.be.a('string');
  });

  it('lists newest first with a cursor, and filters by status and creation time', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: Array<{ invoiceId: string }>; nextCursor: string | null } = (
        await get(`/v1/invoices?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      expect(page.data.length).to.be.at.most(2);
      seen.push(...page.data.map((x: { invoiceId: string }) => x.invoiceId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).to.deep.equal(['inv-paid', 'inv-3', 'inv-2', 'inv-1']);
    const paid = (await get('/v1/invoices?status=paid')).json();
    expect(paid.data.map((x: { invoiceId: string }) => x.invoiceId)).to.deep.equal(['inv-paid']);
    const future = (await get(`/v1/invoices?createdFrom=${new Date(Date.now() + 3600_000).toISOString()}`)).json();
    expect(future).to.deep.equal({ data: [], nextCursor: null });
    for (const [q, code] of [
      ['status=late', 'FILTER_INVALID'],
      ['limit=0', 'FILTER_INVALID'],
      ['limit=1000', 'FILTER_INVALID'],
      ['createdTo=yesterday', 'FILTER_INVALID'],
      ['cursor=bm9wZQ', 'CURSOR_MALFORMED'],
      ['other=1', 'FILTER_INVALID'],
    ]) {
      const r = await get(`/v1/invoices?${q}`);
      expect(r.statusCode, q).to.equal(400);
      expect(r.json().code, q).to.equal(code);
    }
  });

  it('shows an open invoice past its expiry as expired', async () => {
    await post(
      { invoiceId: 'inv-exp', amount: '1', mint: 'SOL', expiresAt: new Date(Date.now() + 60_000).toISOString() },
      'k-exp',
    );
    expect((await get('/v1/invoices/inv-exp')).json().status).to.equal('open');
    await db.pool.query(
      `UPDATE api_invoices SET expires_at = now() - interval '1 second' WHERE invoice_id = 'inv-exp'`,
    );
    expect((await get('/v1/invoices/inv-exp')).json().status).to.equal('expired');
    const expired = (await get('/v1/invoices?status=expired')).json();
    expect(expired.data.map((x: { invoiceId: string }) => x.invoiceId)).to.deep.equal(['inv-exp']);
  });

  it('documents every invoice route in /openapi.json', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const create = doc.paths['/v1/invoices'].post;
    expect(create.requestBody.content['application/json'].schema.required).to.have.members([
      'invoiceId',
      'amount',
      'mint',
    ]);
    expect(create.parameters.find((p: { name: string }) => p.name === 'idempotency-key')).to.include({
      required: true,
    });
    expect(Object.keys(create.responses)).to.include.members(['201', '400', '401', '409']);
    expect(doc.paths['/v1/invoices'].get.parameters.map((p: { name: string }) => p.name)).to.include.members([
      'status',
      'createdFrom',
      'createdTo',
      'limit',
      'cursor',
    ]);
    expect(doc.paths['/v1/invoices/{id}'].get.responses['404']).to.be.an('object');
  });
});
