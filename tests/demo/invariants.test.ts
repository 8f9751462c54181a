// The demo's checks, without I/O: a consistent set of evidence passes, each way a guarantee can break is caught by
// the check that names it, and the table names the sections of docs/guarantees.md it checked.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type { DemoEvidence } from '../../demo/evidence';
import { brokenOf, checkInvariants, GUARANTEES } from '../../demo/invariants';
import { short, tokens } from '../../demo/narrator';
import { demoResult, renderTable } from '../../demo/table';

const KEY1 = 'ful_' + '1'.repeat(64);
const KEY2 = 'ful_' + '2'.repeat(64);

function good(): DemoEvidence {
  return {
    cluster: 'localnet',
    chainPayments: [
      { signature: 'sigA', found: true, err: null, transfers: 1 },
      { signature: 'sigB', found: true, err: null, transfers: 1 },
      { signature: 'sigC', found: true, err: null, transfers: 1 },
    ],
    receiptRows: 4,
    receiptsPerSignature: { sigA: 1, sigB: 1, sigC: 1, airdrop: 1 },
    deliveriesBySource: [
      { source: 'scanner', delivered: 6, inserted: 4, duplicates: 2 },
      { source: 'webhook', delivered: 2, inserted: 0, duplicates: 2 },
    ],
    invoices: [
      {
        id: 'INV-1',
        expected: '100',
        paidOnChain: '200',
        sentByCustomers: '200',
        credited: '100',
        status: 'paid',
        receipts: 2,
        exceptions: [{ kind: 'late_payment', amount: '100', signature: 'sigC' }],
        fulfilmentIds: [KEY1],
        outboxStates: ['delivered'],
        deliveries: [{ key: KEY1, status: 200, outcome: 'applied', signatureValid: true }],
        applied: 1,
      },
      {
        id: 'INV-2',
        expected: '50',
        paidOnChain: '50',
        sentByCustomers: '50',
        credited: '50',
        status: 'paid',
        receipts: 1,
        exceptions: [],
        fulfilmentIds: [KEY2],
        outboxStates: ['delivered'],
        deliveries: [
          { key: KEY2, status: 503, outcome: 'injected-failure', signatureValid: true },
          { key: KEY2, status: 200, outcome: 'applied', signatureValid: true },
        ],
        applied: 1,
      },
    ],
    secondPayment: { invoiceId: 'INV-1', signature: 'sigC', amount: '100' },
    failOnceInvoice: 'INV-2',
    crash: {
      failpoint: 'ledger.after_insert_before_commit',
      killedBy: 'SIGKILL',
      receiptsAfterKill: 0,
      checkpointBefore: '40',
      checkpointAfterKill: '40',
      restartExitCode: 0,
      receiptsAfterRestart: 1,
    },
    webhook: [
      { eventId: 'e1', status: 200, duplicateEvent: false, inserted: 0, duplicates: 2 },
      { eventId: 'e1', status: 200, duplicateEvent: true, inserted: 0, duplicates: 0 },
    ],
    api: [
      { label: 'create', idempotencyKey: 'k1', payoutId: 'p1', status: 201, replayed: false, code: null, rowId: '1' },
      { label: 'replay', idempotencyKey: 'k1', payoutId: 'p1', status: 201, replayed: true, code: null, rowId: '1' },
      {
        label: 'conflict',
        idempotencyKey: 'k1',
        payoutId: 'p1',
        status: 409,
        replayed: false,
        code: 'IDEMPOTENCY_CONFLICT',
        rowId: null,
      },
    ],
    payoutRows: 1,
    payouts: [
      {
        payoutId: 'p1',
        amount: '30',
        recipient: 'R1',
        state: 'succeeded',
        signature: 'payA',
        opPda: 'OP1',
        fault: 'dropped',
        attempts: [{ no: 1, status: 'landed', signature: 'payA', sendCount: 1 }],
        workerSignatures: ['payA', 'payA'],
        opAccount: { amount: '30', recipient: 'R1', mint: 'M' },
        successfulOpTransactions: ['payA'],
        recipientBalance: '30',
      },
    ],
    vault: { funded: '1000', balance: '970' },
  };
}

function failing(e: DemoEvidence): string[] {
  return checkInvariants(e)
    .filter((c) => !c.ok)
    .map((c) => c.name);
}

describe('demo invariants (pure)', () => {
  it('consistent evidence: every check passes, and the table names each guarantee of docs/guarantees.md it checked', () => {
    const checks = checkInvariants(good());
    expect(brokenOf(checks)).to.deep.equal([]);
    const r = demoResult(good(), checks);
    expect(r.verdict).to.equal('HOLDS');
    expect(r.guarantees.map((g) => [g.guarantee, g.holds])).to.deep.equal(
      Object.values(GUARANTEES).map((g) => [g, true]),
    );
    expect(r.guarantees.every((g) => g.checks > 0)).to.equal(true);
    const table = renderTable(r, 6);
    for (const g of Object.values(GUARANTEES))
      expect(table).to.match(new RegExp(`^  HOLDS   ${g.replace('.', '\\.')} \\(`, 'm'));
    expect(table).to.match(/^guarantees: HOLD \(6 of 6 sections\)$/m);
    expect(table).to.not.match(/exactly-once/);
  });

  it('each guarantee name is a section title of docs/guarantees.md', () => {
    const page = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'guarantees.md'), 'utf8');
    for (const g of Object.values(GUARANTEES)) expect(page).to.match(new RegExp(`^## ${g.replace('.', '\\.')}$`, 'm'));
  });

  it('a transfer credited twice (two receipt rows for one instruction) breaks "one receipt per on-chain transfer"', () => {
    const e = good();
    e.receiptsPerSignature.sigA = 2;
    expect(failing(e)).to.include('one receipt per on-chain transfer');
  });

  it('an invoice credited beyond or below its amount is caught', () => {
    const e = good();
    e.invoices[1].credited = '40';
    expect(failing(e)).to.include.members(['INV-2 credited exactly', 'INV-2 money accounted']);
  });

  it('a second payment dropped instead of recorded is caught', () => {
    const e = good();
    e.invoices[0].exceptions = [];
    expect(failing(e)).to.include.members(['INV-1 money accounted', 'second payment kept as an exception']);
  });

  it('no duplicates seen means the story did not exercise redelivery', () => {
    const e = good();
    e.deliveriesBySource = [{ source: 'scanner', delivered: 4, inserted: 4, duplicates: 0 }];
    expect(failing(e)).to.include('duplicates absorbed');
  });

  it('a half-applied batch after SIGKILL is caught', () => {
    const e = good();
    e.crash.receiptsAfterKill = 1;
    expect(failing(e)).to.include('SIGKILL mid-batch left nothing half-applied');
  });

  it('a fulfilment applied twice, or retried under another key, is caught', () => {
    const e = good();
    e.invoices[0].applied = 2;
    e.invoices[1].deliveries[1].key = 'ful_other';
    expect(failing(e)).to.include.members([
      'INV-1 fulfilled once',
      'INV-2 fulfilled once',
      'failed delivery retried with the same Idempotency-Key',
    ]);
  });

  it('a missing 409 or a replay that created a new row is caught', () => {
    const e = good();
    e.api = e.api.filter((a) => a.status !== 409);
    e.api[1].rowId = '2';
    expect(failing(e)).to.include.members(['API conflict refused (409)', 'API replay returns the original']);
  });

  it('a payout executed twice on chain (two successful op transactions, double balance) is caught', () => {
    const e = good();
    e.payouts[0].successfulOpTransactions = ['payA', 'payB'];
    e.payouts[0].recipientBalance = '60';
    e.vault.balance = '940';
    expect(failing(e)).to.include.members(['p1 executed once on chain', 'vault paid out exactly the payouts']);
  });
});

describe('demo narration helpers (pure)', () => {
  it('formats base units exactly, without floats', () => {
    expect(tokens(12_500_000n, 6)).to.equal('12.500000');
    expect(tokens(18_446_744_073_709_551_615n, 6)).to.equal('18446744073709.551615');
    expect(tokens(0n, 6)).to.equal('0.000000');
    expect(short('5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj')).to.equal('5EjQQXLj…ySUj');
    expect(short('abc')).to.equal('abc');
  });

  it('a broken invariant makes the table end in the list of what broke', () => {
    const e = good();
    e.payouts[0].successfulOpTransactions = ['payA', 'payB'];
    const r = demoResult(e, checkInvariants(e));
    expect(r.verdict).to.equal('BROKEN');
    expect(r.guarantees.filter((g) => !g.holds).map((g) => g.guarantee)).to.deep.equal([GUARANTEES.journal]);
    const table = renderTable(r, 6);
    expect(table).to.match(/^ {2}BROKEN {2}2\. Payout journal and worker pool \(\d+ checks, 1 failed\)$/m);
    expect(table).to.match(/guarantees: BROKEN\n {2}- p1 executed once on chain/);
  });
});
