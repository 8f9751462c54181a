// The report is pure past its six queries: their rows → the JSON report (reportOf), and that → plain text (formatReport).
import { expect } from 'chai';
import { formatReport, reportOf } from '../../indexer/report';

describe('indexer/report', () => {
  it('formats totals, deliveries, exceptions, outbox and checkpoints', () => {
    const text = formatReport({
      invoices: [
        {
          id: 'A',
          merchant: 'default',
          mint: 'USDC',
          expected: '100',
          credited: '100',
          status: 'paid',
          paidAt: '2026-11-30T00:00:00.000Z',
        },
        {
          id: 'B',
          merchant: 'default',
          mint: 'USDC',
          expected: '18446744073709551615',
          credited: '9007199254740993',
          status: 'open',
          paidAt: null,
        },
      ],
      receipts: { total: 3, matched: 2, bySource: { scanner: 3 } },
      deliveries: [{ cluster: 'localnet', source: 'scanner', delivered: 60, inserted: 3, duplicates: 57 }],
      exceptions: { overpayment: { count: 1, amount: '5' } },
      outbox: { pending: 0, delivering: 0, delivered: 1, dead: 0 },
      checkpoints: [{ cluster: 'localnet', source: 'scanner', slot: '42' }],
    });
    expect(text.split('\n')).to.deep.equal([
      'invoices: 2 (1 paid)',
      '  A  paid  100/100 USDC',
      '  B  open  9007199254740993/18446744073709551615 USDC',
      'receipts: 3 (2 matched)',
      '  localnet/scanner: delivered 60, new 3, duplicates 57',
      'exceptions: overpayment 1 (5)',
      'outbox: pending 0, delivering 0, delivered 1, dead 0',
      'checkpoint localnet/scanner: slot 42',
      '',
    ]);
  });
});

describe('indexer/report rows (pure)', () => {
  it('turns the report queries rows into the report: counts as numbers, amounts as decimal strings', () => {
    const invoice = {
      id: 'A',
      merchant: 'm',
      mint: 'MINT',
      expected: '18446744073709551615',
      credited: '9007199254740993',
      status: 'open',
    };
    const r = reportOf({
      invoices: [{ ...invoice, paid_at: null }],
      receipts: [
        { first_source: 'scanner', n: '3', matched: '2' },
        { first_source: 'webhook', n: '1', matched: '0' },
      ],
      deliveries: [{ cluster: 'localnet', source: 'scanner', delivered: '9', inserted: '3', duplicates: '6' }],
      exceptions: [{ kind: 'overpayment', n: '1', amount: '18446744073709551615' }],
      outbox: [{ state: 'delivered', n: '1' }],
      checkpoints: [{ cluster: 'localnet', source: 'scanner', slot: '42' }],
    });
    expect(r.invoices).to.deep.equal([{ ...invoice, paidAt: null }]);
    expect(r.receipts).to.deep.equal({ total: 4, matched: 2, bySource: { scanner: 3, webhook: 1 } });
    expect(r.deliveries).to.deep.equal([
      { cluster: 'localnet', source: 'scanner', delivered: 9, inserted: 3, duplicates: 6 },
    ]);
    expect(r.exceptions).to.deep.equal({ overpayment: { count: 1, amount: '18446744073709551615' } });
    expect(r.outbox).to.deep.equal({ pending: 0, delivering: 0, delivered: 1, dead: 0 });
    expect(r.checkpoints).to.deep.equal([{ cluster: 'localnet', source: 'scanner', slot: '42' }]);
  });
});
