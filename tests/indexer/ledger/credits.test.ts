// What one match writes (indexer/ledger/credits.ts creditRows), without a database.
import { expect } from 'chai';
import type { Receipt } from '../../../indexer/decode/receipt';
import { creditRows, planReceipts } from '../../../indexer/ledger/credits';
import { invoiceState as inv, receipt as fixtureReceipt } from './fixtures';

/** 60 units of MINT to DEST, at slot 100. */
function receipt(signature: string, p: Partial<Receipt> = {}): Receipt {
  return { ...fixtureReceipt({ signature, destination: 'DEST', amount: 60n }), mint: 'MINT', ...p };
}

describe('indexer/ledger credits (pure)', () => {
  it('sums credits per invoice, lists exceptions with their receipt rows, and the invoices paid now', () => {
    const a = inv({ id: 'A', depositAddress: 'DEST' });
    const chain = [receipt('s1'), receipt('s2'), receipt('s3', { mint: 'OTHER' }), receipt('s4', { destination: 'X' })];
    const planning = planReceipts(chain, [a]);
    const plan = planning.plan();
    expect(planning.invoiceIds).to.deep.equal(['A', 'A', 'A', null]);
    const ids: Record<string, string> = { s1: '11', s2: '12', s3: '13', s4: '14' };
    const c = creditRows(chain, plan);
    // 60 + 40 completes A (100): the second receipt's excess 20 is an overpayment; the third is the wrong mint.
    expect(c.credited).to.deep.equal([{ invoiceId: 'A', amount: 100n }]);
    expect(c.fulfilled).to.deep.equal(['A']);
    // A payment to an address no invoice knows (s4) is not the ledger's business: no row.
    expect(c.exceptions.kinds).to.deep.equal(['overpayment', 'mint_mismatch']);
    // The receipts that raised them (their row ids are asked for when the rows are written).
    expect(c.exceptions.receipts.map((r) => ids[r.signature])).to.deep.equal(['12', '13']);
    expect(c.exceptions.invoiceIds).to.deep.equal(['A', 'A']);
    expect(c.exceptions.amounts).to.deep.equal(['20', '60']);
    expect(c.raised.map((e) => [e.kind, e.signature, e.amount])).to.deep.equal([
      ['overpayment', 's2', 20n],
      ['mint_mismatch', 's3', 60n],
    ]);
    expect(c.invoices.map((i) => [i.id, i.creditedAmount, i.status])).to.deep.equal([['A', 100n, 'paid']]);
  });

  it('matches only as far as asked (a COPY chunk at a time), and the whole plan is the same as matching at once', () => {
    const a = inv({ id: 'A', depositAddress: 'DEST' });
    const b = inv({ id: 'B', depositAddress: 'DEST', createdSeq: 2 });
    const chain = [receipt('s1'), receipt('s2'), receipt('s3'), receipt('s4'), receipt('s5', { destination: 'X' })];
    const whole = planReceipts(chain, [a, b]).plan();
    const planning = planReceipts(chain, [a, b]);
    planning.through(2);
    // The first two are matched (A fills with 60 + 40); the others are not yet.
    expect(planning.invoiceIds.slice(0, 2)).to.deep.equal(['A', 'A']);
    expect(planning.invoiceIds.slice(2).every((x) => x === undefined)).to.equal(true);
    planning.through(2); // asking again for the same receipts matches nothing twice
    planning.through(4);
    // A was paid by the second: the third and fourth go to B, the next open invoice at the address.
    expect(planning.invoiceIds.slice(0, 4)).to.deep.equal(['A', 'A', 'B', 'B']);
    const plan = planning.plan();
    expect(planning.invoiceIds).to.deep.equal(['A', 'A', 'B', 'B', null]);
    expect(plan).to.deep.equal(whole);
    expect(plan.invoices.map((i) => [i.id, i.creditedAmount, i.status])).to.deep.equal([
      ['A', 100n, 'paid'],
      ['B', 100n, 'paid'],
    ]);
  });

  it('writes nothing for a batch that matches nothing', () => {
    const chain = [receipt('s1', { destination: 'NOBODY', mint: null })];
    const c = creditRows(chain, planReceipts(chain, []).plan());
    expect(c.credited).to.deep.equal([]);
    expect(c.fulfilled).to.deep.equal([]);
    expect(c.invoices).to.deep.equal([]);
  });
});
