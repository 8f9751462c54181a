// Exceptions scoped by merchant, on the real ledger and PostgreSQL (no chain: nothing here is executed): a merchant's
// exceptions are those whose money arrived in its vault, or that are about its API invoice (paid to its receiving
// wallet), or that it refunded. Listed, shown, totalled and resolved with a merchant in scope, another merchant's
// exception is not found and stays as it was; a refund stored for a merchant takes its own exceptions and those of
// no registered merchant, never another merchant's; a refund nobody names a payer for is paid by the API invoice's
// merchant (the console's *refund*).
import { expect } from 'chai';
import { hashApiKey } from '../../app/api/api-key-auth';
import { prepareRefund, resolveException } from '../../app/exception/refund';
import { exceptionTotals, getException, listExceptions } from '../../app/exception/store';
import { createInvoice } from '../../app/invoice/create-invoice';
import { insertMerchant, MerchantRow } from '../../app/merchant/store';
import { address } from '../../app/types';
import { createLedger } from '../../indexer/ledger';
import { createTestDb, TestDb } from '../../testkit/test-db';
import { addr, receipt, sig } from '../indexer/ledger/fixtures';

describe('app/exception: scoped by merchant (two merchants, one database)', () => {
  let db: TestDb;
  let A: MerchantRow;
  let B: MerchantRow;
  const mint = addr('scope-mint');
  /** Exception ids: an overpayment into A's vault, into B's vault, and into an address no merchant registered. */
  const ex = { a: '', b: '', nobody: '' };

  /** Every row of the tables a settlement writes, to see that a refused one changed nothing. */
  const snapshot = async () =>
    JSON.stringify(
      await Promise.all(
        ['exception_resolutions', 'payouts', 'exceptions'].map(
          async (t) => (await db.pool.query(`SELECT * FROM ${t} ORDER BY 1`)).rows,
        ),
      ),
    );

  before(async () => {
    db = await createTestDb('app_exception_scope');
    const merchant = (name: string) =>
      insertMerchant(db.pool, {
        name,
        apiKeyHash: hashApiKey(`${name}-key-0123456789`),
        programId: address(addr('program')),
        merchantAddress: address(addr(`${name}-merchant`)),
        vault: address(addr(`${name}-vault`)),
      });
    A = await merchant('a');
    B = await merchant('b');
    const ledger = createLedger({ db: db.pool });
    for (const [key, to] of [
      ['a', A.vault],
      ['b', B.vault],
      ['nobody', addr('unregistered-deposit')],
    ] as const) {
      await ledger.createInvoice({ id: `INV-${key}`, mint, expectedAmount: 100n, depositAddress: to });
      await ledger.applyBatch({
        cluster: 'scope',
        source: 'scanner',
        receipts: [receipt({ signature: sig(`scope-${key}`), destination: to, mint, amount: 150n })],
      });
      ex[key] = (await listExceptions(db.pool, { invoiceId: `INV-${key}` }))[0].id;
    }
  });
  after(async () => {
    await db?.drop();
  });

  it("list, show and totals of a merchant hold its own exceptions only; without one, everyone's", async () => {
    expect((await listExceptions(db.pool, {}, { merchantId: A.id })).map((e) => e.id)).to.deep.equal([ex.a]);
    expect((await listExceptions(db.pool, {}, { merchantId: B.id })).map((e) => e.id)).to.deep.equal([ex.b]);
    expect((await listExceptions(db.pool)).map((e) => e.id)).to.have.members([ex.a, ex.b, ex.nobody]);
    expect(await getException(db.pool, ex.b, { merchantId: A.id })).to.equal(null);
    expect((await getException(db.pool, ex.a, { merchantId: A.id }))?.id).to.equal(ex.a);
    expect((await exceptionTotals(db.pool, { merchantId: A.id })).open).to.deep.equal({ count: 1, amount: 50n });
    expect((await exceptionTotals(db.pool)).open).to.deep.equal({ count: 3, amount: 150n });
  });

  it("an API invoice's exception (paid to the receiving wallet) is its merchant's; a refund with no payer named is paid by it", async () => {
    const wallet = addr('c-wallet');
    const C = await insertMerchant(db.pool, {
      name: 'c',
      apiKeyHash: hashApiKey('c-key-0123456789'),
      programId: address(addr('program')),
      merchantAddress: address(addr('c-merchant')),
      vault: address(addr('c-vault')),
      receivingAddress: address(wallet),
    });
    const { row } = await createInvoice(db.pool, C, { invoiceId: 'api-1', amount: '100', mint }, async () => 6);
    await createLedger({ db: db.pool }).applyBatch({
      cluster: 'scope',
      source: 'scanner',
      receipts: [
        receipt({
          signature: sig('scope-api'),
          destination: addr('c-wallet-ata'),
          destinationOwner: wallet,
          references: [row.reference],
          mint,
          amount: 130n,
        }),
      ],
    });
    const [e] = await listExceptions(db.pool, { invoiceId: row.ledgerInvoiceId });
    expect(e).to.deep.include({ kind: 'overpayment', amount: 30n });
    expect((await listExceptions(db.pool, {}, { merchantId: C.id })).map((x) => x.id)).to.deep.equal([e.id]);
    expect(await getException(db.pool, e.id, { merchantId: A.id, orUnowned: true })).to.equal(null);
    const refund = await prepareRefund(db.pool, e.id);
    expect(refund.payout.merchantId).to.equal(C.id);
    expect(refund.payout.amount).to.equal(30n);
  });

  it("resolving or refunding another merchant's exception is 'not found' and changes nothing", async () => {
    const before = await snapshot();
    const resolve = await resolveException(db.pool, ex.b, 'not mine', { merchantId: A.id }).catch((e) => e);
    expect(resolve.code).to.equal('ONCEPAY__EXCEPTION__NOT_FOUND');
    const refund = await prepareRefund(db.pool, ex.b, { merchant: A }).catch((e) => e);
    expect(refund.code).to.equal('ONCEPAY__EXCEPTION__NOT_FOUND');
    expect(await snapshot()).to.equal(before);
  });

  it('a refund paid by a merchant takes its own exception, or one of no registered merchant; then it is that merchant’s', async () => {
    const own = await prepareRefund(db.pool, ex.a, { merchant: A });
    expect(own.payout.merchantId).to.equal(A.id);
    const unowned = await prepareRefund(db.pool, ex.nobody, { merchant: B });
    expect(unowned.payout.merchantId).to.equal(B.id);
    // B refunded it: now it is in B's scope, and out of A's.
    expect((await listExceptions(db.pool, {}, { merchantId: B.id })).map((e) => e.id)).to.have.members([
      ex.b,
      ex.nobody,
    ]);
    expect(await getException(db.pool, ex.nobody, { merchantId: A.id })).to.equal(null);
    const refusedByAuthorize = await prepareRefund(db.pool, ex.b, {
      merchant: B,
      authorize: async () => {
        throw Object.assign(new Error('no key for B'), { code: 'ONCEPAY__PAYOUT__SIGNER_UNAUTHORIZED' });
      },
    }).catch((e) => e);
    expect(refusedByAuthorize.code).to.equal('ONCEPAY__PAYOUT__SIGNER_UNAUTHORIZED');
    expect((await getException(db.pool, ex.b))!.state, 'nothing stored for a refund its caller cannot sign').to.equal(
      'open',
    );
  });
});
