// The plain-text report is a pure function of the JSON report.
import { expect } from 'chai';
import { formatReport } from '../../indexer/report';

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
