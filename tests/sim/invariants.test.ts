// The invariants (sim/invariants.ts) are pure checks over Evidence: each holds on evidence of a run that went
// right, and each breaks, naming what broke, on evidence where its promise was broken — so a simulation whose
// invariants were vacuous could not pass here.
import { expect } from 'chai';
import type { Evidence } from '../../sim/evidence';
import { checkInvariants, INVARIANT_NAMES } from '../../sim/invariants';
import { fulfilmentOpId } from '../../indexer/ledger/fulfilment';

/** Two payouts paid once each, two invoices (one paid, one open), a duplicate absorbed, one refund. */
function good(): Evidence {
  const ful = fulfilmentOpId('inv0');
  return {
    cluster: 'sim',
    payouts: [
      {
        id: '1',
        payoutId: 'po-0',
        opId: 'op-0',
        amount: 100n,
        recipient: 'r0',
        state: 'succeeded',
        resultSignature: 'tx:1:h2',
        attempts: [
          { signature: 'tx:1:h1', status: 'expired' },
          { signature: 'tx:1:h2', status: 'landed' },
        ],
      },
      {
        id: '2',
        payoutId: 'refund:sim:pay0:0:-1',
        opId: 'op-r',
        amount: 5n,
        recipient: 'customer0',
        state: 'succeeded',
        resultSignature: 'tx:2:h3',
        attempts: [{ signature: 'tx:2:h3', status: 'landed' }],
      },
    ],
    opTransactions: [
      { opId: 'op-0', signature: 'tx:1:h2', err: null },
      { opId: 'op-r', signature: 'tx:2:h3', err: null },
    ],
    recipientBalances: new Map([
      ['r0', 100n],
      ['customer0', 5n],
    ]),
    transfers: [
      { key: 'pay0/0/-1', amount: 15n, watched: true, final: true },
      { key: 'pay1/0/-1', amount: 3n, watched: true, final: true },
      { key: 'tx:1:h2/0/0', amount: 100n, watched: false, final: true },
    ],
    receipts: [
      { key: 'pay0/0/-1', amount: 15n, invoiceId: 'inv0' },
      { key: 'pay1/0/-1', amount: 3n, invoiceId: 'inv1' },
      { key: 'tx:1:h2/0/0', amount: 100n, invoiceId: null },
    ],
    invoices: [
      { id: 'inv0', expected: 10n, credited: 10n, status: 'paid' },
      { id: 'inv1', expected: 10n, credited: 3n, status: 'open' },
    ],
    exceptions: [{ receipt: 'pay0/0/-1', kind: 'overpayment', amount: 5n, invoiceId: 'inv0' }],
    fulfilments: [{ invoiceId: 'inv0', id: ful }],
    outbox: [{ fulfilmentId: ful, invoiceId: 'inv0', state: 'delivered' }],
    merchant: {
      applied: [{ key: ful, invoiceId: 'inv0' }],
      requests: [
        { key: ful, invoiceId: 'inv0' },
        { key: ful, invoiceId: 'inv0' },
      ],
    },
    counters: [
      { source: 'scanner', delivered: 3, inserted: 2, duplicates: 1 },
      { source: 'webhook', delivered: 2, inserted: 1, duplicates: 1 },
    ],
    refunds: [{ receipt: 'pay0/0/-1', kind: 'overpayment', amount: 5n, payoutRow: '2' }],
    checkpointGaps: [],
    sentUnjournaled: [],
    api: [
      { key: 'k0', payoutId: 'po-0', amount: '100', status: 201, code: null, rowId: '1' },
      { key: 'k0', payoutId: 'po-0', amount: '100', status: 200, code: null, rowId: '1' },
      { key: 'k0', payoutId: 'po-0', amount: '101', status: 409, code: 'IDEMPOTENCY_CONFLICT', rowId: null },
    ],
  };
}

/** The names of the invariants `e` breaks. */
const broken = (e: Evidence) => [...new Set(checkInvariants(e).map((p) => p.slice(0, p.indexOf(':'))))];

describe('sim invariants (pure)', () => {
  it('hold on evidence of a run that went right', () => {
    expect(checkInvariants(good())).to.deep.equal([]);
  });

  const cases: Array<[string, (e: Evidence) => void, string[]]> = [
    [
      'an op executed twice',
      (e) => {
        e.opTransactions.push({ opId: 'op-0', signature: 'tx:1:h9', err: null });
        e.payouts[0].attempts.push({ signature: 'tx:1:h9', status: 'landed' });
        e.recipientBalances.set('r0', 200n);
      },
      ['no-op-paid-twice', 'funded-payout-eventually-paid'],
    ],
    [
      'a recipient holding more than its payouts paid',
      (e) => e.recipientBalances.set('r0', 101n),
      ['no-op-paid-twice'],
    ],
    [
      'two rows for one payout id',
      (e) => e.payouts.push({ ...e.payouts[0], id: '9', opId: 'op-9' }),
      ['no-op-paid-twice', 'funded-payout-eventually-paid'],
    ],
    [
      'an attempt refused by the op guard',
      (e) => {
        e.opTransactions.push({ opId: 'op-0', signature: 'tx:1:h3', err: 6000 });
        e.payouts[0].attempts.push({ signature: 'tx:1:h3', status: 'failed' });
      },
      ['op-guard-never-needed'],
    ],
    [
      'a transaction on chain in no journal',
      (e) => e.opTransactions.push({ opId: 'op-0', signature: 'x', err: 6000 }),
      ['op-guard-never-needed', 'sent-attempt-journaled'],
    ],
    ['a send seen before its journal write', (e) => e.sentUnjournaled!.push('tx:1:h2'), ['sent-attempt-journaled']],
    ['a payout left failed', (e) => (e.payouts[0].state = 'failed'), ['funded-payout-eventually-paid']],
    [
      'a payout succeeded without its proof',
      (e) => (e.payouts[0].resultSignature = null),
      ['funded-payout-eventually-paid'],
    ],
    [
      'an attempt left open',
      (e) => e.payouts[0].attempts.push({ signature: 'tx:1:h4', status: 'sent' }),
      ['funded-payout-eventually-paid'],
    ],
    [
      'the paying attempt settled as failed',
      (e) => (e.payouts[0].attempts[1].status = 'failed'),
      ['funded-payout-eventually-paid'],
    ],
    [
      'a final transfer with no receipt',
      (e) => e.receipts.splice(1, 1),
      ['finalized-transfer-credited-once', 'counters-consistent'],
    ],
    [
      'a receipt credited twice',
      (e) => {
        e.invoices[1].credited = 6n;
      },
      ['finalized-transfer-credited-once'],
    ],
    [
      'a duplicate kept as an exception',
      (e) => e.exceptions.push({ receipt: 'pay1/0/-1', kind: 'late_payment', amount: 3n, invoiceId: 'inv1' }),
      ['finalized-transfer-credited-once'],
    ],
    [
      'a receipt of a transfer that is not final',
      (e) => (e.transfers[1].final = false),
      ['finalized-transfer-credited-once'],
    ],
    [
      'an invoice paid short',
      (e) => (e.invoices[1].status = 'paid'),
      ['finalized-transfer-credited-once', 'one-fulfilment-per-paid-invoice'],
    ],
    [
      'a paid invoice the merchant applied twice (two keys)',
      (e) => e.merchant.applied.push({ key: 'ful_other', invoiceId: 'inv0' }),
      ['one-fulfilment-per-paid-invoice'],
    ],
    ['a paid invoice never delivered', (e) => (e.outbox[0].state = 'dead'), ['one-fulfilment-per-paid-invoice']],
    ['a paid invoice without its fulfilment', (e) => (e.fulfilments = []), ['one-fulfilment-per-paid-invoice']],
    [
      'a delivery under another key',
      (e) => e.merchant.requests.push({ key: 'random-key', invoiceId: 'inv0' }),
      ['one-fulfilment-per-paid-invoice'],
    ],
    [
      'an unpaid invoice fulfilled',
      (e) => e.fulfilments.push({ invoiceId: 'inv1', id: fulfilmentOpId('inv1') }),
      ['one-fulfilment-per-paid-invoice'],
    ],
    ['delivered ≠ inserted + duplicates', (e) => (e.counters[0].delivered = 4), ['counters-consistent']],
    ['more inserted than rows', (e) => (e.counters[1].inserted = 2), ['counters-consistent']],
    [
      'an exception refunded twice',
      (e) => e.refunds.push({ ...e.refunds[0], payoutRow: '1' }),
      ['one-refund-per-exception'],
    ],
    [
      'a refund under another payout id',
      (e) => (e.payouts[1].payoutId = 'refund-by-hand'),
      ['one-refund-per-exception'],
    ],
    [
      'a replay answering another payout',
      (e) => e.api!.push({ key: 'k0', payoutId: 'po-0', amount: '100', status: 200, code: null, rowId: '2' }),
      ['idempotency-key-replays'],
    ],
    [
      'another body stored under a used key',
      (e) => (e.api![2] = { ...e.api![2], status: 201, code: null, rowId: '2' }),
      ['idempotency-key-replays'],
    ],
    [
      'a checkpoint past a transfer its source never delivered',
      (e) => e.checkpointGaps!.push({ source: 'scanner', checkpoint: 9, missing: ['pay1/0/-1'] }),
      ['checkpoint-covers-delivered'],
    ],
  ];
  for (const [what, spoil, names] of cases) {
    it(`break on ${what}: ${names.join(', ')}`, () => {
      const e = good();
      spoil(e);
      expect(broken(e)).to.have.members(names);
    });
  }

  it('every invariant is broken by some case above', () => {
    const hit = new Set(cases.flatMap(([, , names]) => names));
    expect(INVARIANT_NAMES.filter((n) => !hit.has(n))).to.deep.equal([]);
  });
});
