// The matcher is pure: these run without a database.
import { expect } from 'chai';
import { matchBatch, matchReceipt, selectInvoice } from '../../../indexer/match';
import type { MatchReceipt } from '../../../indexer/match';
import { invoiceState as inv } from '../ledger/fixtures';

function rc(p: Partial<MatchReceipt>): MatchReceipt {
  return { mint: 'MINT', destination: 'DEST', destinationOwner: null, amount: 100n, ...p };
}

describe('indexer/match', () => {
  it('credits an address-only invoice by destination or by destination owner', () => {
    const a = inv({ id: 'A', depositAddress: 'DEST' });
    expect(matchReceipt(rc({}), [a]).outcome).to.deep.include({ invoiceId: 'A', credit: 100n, paidNow: true });
    expect(matchReceipt(rc({ destination: 'ATA', destinationOwner: 'DEST' }), [a]).outcome.invoiceId).to.equal('A');
  });

  it('matches a reference from the instruction keys, and from account keys only at the deposit address', () => {
    const r = inv({ id: 'R', referenceKey: 'REF' });
    expect(selectInvoice(rc({ references: ['REF'] }), [r]).invoice?.id).to.equal('R');
    // Account keys alone are shared by every transfer of the transaction: not enough without an address.
    expect(selectInvoice(rc({ accountKeys: ['REF'] }), [r]).invoice).to.equal(null);
    const rd = inv({ id: 'RD', referenceKey: 'REF', depositAddress: 'DEST' });
    expect(selectInvoice(rc({ accountKeys: ['REF'] }), [rd]).invoice?.id).to.equal('RD');
    expect(selectInvoice(rc({ accountKeys: ['REF'], destination: 'FEE' }), [rd]).invoice).to.equal(null);
  });

  it('splits a payment beyond the expected amount into a credit and an overpayment exception', () => {
    const { outcome, next } = matchReceipt(rc({ amount: 150n }), [
      inv({ id: 'A', depositAddress: 'DEST', creditedAmount: 30n }),
    ]);
    expect(outcome.credit).to.equal(70n);
    expect(outcome.paidNow).to.equal(true);
    expect(outcome.exceptions).to.deep.equal([
      { kind: 'overpayment', amount: 80n, invoiceId: 'A', detail: 'expected 100, excess 80' },
    ]);
    expect(next?.creditedAmount).to.equal(100n);
  });

  it('raises late_payment for a payment to a paid invoice, keeping the whole amount', () => {
    const { outcome } = matchReceipt(rc({ amount: 5n }), [
      inv({ id: 'A', depositAddress: 'DEST', status: 'paid', creditedAmount: 100n }),
    ]);
    expect(outcome.credit).to.equal(0n);
    expect(outcome.exceptions.map((e) => [e.kind, e.amount])).to.deep.equal([['late_payment', 5n]]);
  });

  it('raises mint_mismatch / unknown_mint without crediting', () => {
    const a = inv({ id: 'A', depositAddress: 'DEST' });
    expect(matchReceipt(rc({ mint: 'OTHER' }), [a]).outcome.exceptions[0].kind).to.equal('mint_mismatch');
    expect(matchReceipt(rc({ mint: null }), [a]).outcome.exceptions[0].kind).to.equal('unknown_mint');
    expect(matchReceipt(rc({ mint: null }), [a]).outcome.credit).to.equal(0n);
  });

  it('raises unknown_reference for money at a watched address that no invoice claims, and ignores unwatched money', () => {
    const r = inv({ id: 'R', referenceKey: 'REF', depositAddress: 'DEST' });
    const { outcome } = matchReceipt(rc({ references: ['NOPE'] }), [r]);
    expect(outcome.exceptions.map((e) => [e.kind, e.amount, e.invoiceId])).to.deep.equal([
      ['unknown_reference', 100n, null],
    ]);
    expect(matchReceipt(rc({ destination: 'ELSEWHERE', references: ['NOPE'] }), [r]).outcome.exceptions).to.deep.equal(
      [],
    );
    // In a batch, money no invoice could claim gets the same outcome as matchReceipt without candidates.
    const elsewhere = rc({ destination: 'ELSEWHERE', references: ['NOPE'] });
    const [o] = matchBatch([elsewhere], [r]).outcomes;
    expect(o).to.deep.equal(matchReceipt(elsewhere, []).outcome);
    expect(o.invoiceId).to.equal(null);
  });

  it('fills the oldest open invoice at a shared address first, then pays the next, then is late', () => {
    const invoices = [
      inv({ id: 'B', depositAddress: 'DEST', createdSeq: 2 }),
      inv({ id: 'A', depositAddress: 'DEST', createdSeq: 1 }),
    ];
    const { outcomes, invoices: changed } = matchBatch([rc({}), rc({}), rc({ amount: 7n })], invoices);
    expect(outcomes.map((o) => o.invoiceId)).to.deep.equal(['A', 'B', 'B']);
    expect(outcomes[2].exceptions[0].kind).to.equal('late_payment');
    expect(changed.map((i) => [i.id, i.status])).to.deep.equal([
      ['B', 'paid'],
      ['A', 'paid'],
    ]);
  });

  it('keeps amounts above 2^53 exact', () => {
    const big = (1n << 60n) + 1n;
    const { outcome } = matchReceipt(rc({ amount: big }), [
      inv({ id: 'A', depositAddress: 'DEST', expectedAmount: big + 2n }),
    ]);
    expect(outcome.credit).to.equal(big);
    expect(outcome.paidNow).to.equal(false);
  });
});
