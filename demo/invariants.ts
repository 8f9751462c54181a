// Pure: the demo's checks, each against the gathered evidence and each under the section of docs/guarantees.md
// whose promise it checks. No I/O, unit-tested on its own.
import type { DemoEvidence } from './evidence';

/** The sections of docs/guarantees.md, by their titles there (tests/docs/guarantees.test.ts holds the page to them). */
export const GUARANTEES = {
  payoutOnChain: '1. Payout on chain',
  journal: '2. Payout journal and worker pool',
  api: '3. API Idempotency-Key',
  ledger: '4. Receipts ledger',
  exceptions: '5. Exceptions and refunds',
  fulfilment: '6. Fulfilment and outbox delivery',
} as const;
export type Guarantee = (typeof GUARANTEES)[keyof typeof GUARANTEES];

export interface Check {
  /** The section of docs/guarantees.md this check is evidence for. */
  guarantee: Guarantee;
  name: string;
  ok: boolean;
  detail: string;
}

const big = (s: string) => BigInt(s);

const check = (guarantee: Guarantee, name: string, ok: boolean, detail: string): Check => ({
  guarantee,
  name,
  ok,
  detail,
});

/** Receipts: one row per transfer instruction the chain holds, none twice, none lost. */
function receiptChecks(e: DemoEvidence): Check[] {
  const g = GUARANTEES.ledger;
  const chainTransfers = e.chainPayments.reduce((n, p) => n + p.transfers, 0);
  const paymentRows = e.chainPayments.reduce((n, p) => n + (e.receiptsPerSignature[p.signature] ?? 0), 0);
  const inserted = e.deliveriesBySource.reduce((n, d) => n + d.inserted, 0);
  const duplicates = e.deliveriesBySource.reduce((n, d) => n + d.duplicates, 0);
  return [
    check(
      g,
      'payments landed on chain',
      e.chainPayments.length > 0 && e.chainPayments.every((p) => p.found && p.err === null),
      `${e.chainPayments.length} customer transactions found without error`,
    ),
    check(
      g,
      'one receipt per on-chain transfer',
      paymentRows === chainTransfers &&
        e.chainPayments.every((p) => e.receiptsPerSignature[p.signature] === p.transfers),
      `${paymentRows} receipt rows for the customers' ${chainTransfers} transfers on chain`,
    ),
    check(
      g,
      'deliveries = new + duplicates, per source',
      e.deliveriesBySource.every((d) => d.delivered === d.inserted + d.duplicates) && inserted === e.receiptRows,
      `${inserted} inserted over all sources, ${e.receiptRows} rows`,
    ),
    check(
      g,
      'duplicates absorbed',
      duplicates > 0,
      `${duplicates} redelivered receipts absorbed (${e.deliveriesBySource.map((d) => `${d.source} ${d.duplicates}`).join(', ')})`,
    ),
  ];
}

/** Money: every invoice credited exactly its amount; every unit on chain is credited or an exception. */
function moneyChecks(e: DemoEvidence): Check[] {
  const checks: Check[] = [];
  for (const inv of e.invoices) {
    const exc = inv.exceptions.reduce((n, x) => n + big(x.amount), 0n);
    checks.push(
      check(
        GUARANTEES.ledger,
        `${inv.id} credited exactly`,
        big(inv.credited) === big(inv.expected) && inv.status === 'paid',
        `credited ${inv.credited} of ${inv.expected}, ${inv.status}`,
      ),
      check(
        GUARANTEES.exceptions,
        `${inv.id} money accounted`,
        big(inv.credited) + exc === big(inv.paidOnChain) && big(inv.paidOnChain) === big(inv.sentByCustomers),
        `chain ${inv.paidOnChain} = credited ${inv.credited} + exceptions ${exc}`,
      ),
    );
  }
  const twice = e.invoices.find((i) => i.id === e.secondPayment.invoiceId);
  const kept = twice?.exceptions.filter((x) => x.signature === e.secondPayment.signature) ?? [];
  checks.push(
    check(
      GUARANTEES.exceptions,
      'second payment kept as an exception',
      kept.length === 1 && big(kept[0].amount) === big(e.secondPayment.amount),
      kept.map((x) => `${x.kind} ${x.amount}`).join(', ') || 'none',
    ),
  );
  return checks;
}

/** Crash: nothing half-applied, and the restart applies it once. Webhook: a redelivered event id is answered 2xx
 * and applies nothing. */
function redeliveryChecks(e: DemoEvidence): Check[] {
  const g = GUARANTEES.ledger;
  const c = e.crash;
  const dupEvent = e.webhook.filter((w) => w.duplicateEvent);
  return [
    check(
      g,
      'SIGKILL mid-batch left nothing half-applied',
      c.killedBy === 'SIGKILL' && c.receiptsAfterKill === 0 && c.checkpointAfterKill === c.checkpointBefore,
      `killed by ${c.killedBy}, ${c.receiptsAfterKill} receipts, checkpoint ${c.checkpointAfterKill} (was ${c.checkpointBefore})`,
    ),
    check(
      g,
      'restart applied the batch once',
      c.restartExitCode === 0 && c.receiptsAfterRestart === 1,
      `exit ${c.restartExitCode}, ${c.receiptsAfterRestart} receipt`,
    ),
    check(
      g,
      'webhook redelivery absorbed',
      e.webhook.every((w) => w.status === 200 && w.inserted === 0) && dupEvent.length > 0,
      `${e.webhook.length} deliveries, ${dupEvent.length} duplicate event(s), 0 new receipts`,
    ),
  ];
}

/** Fulfilment: one operation per paid invoice, applied once by the merchant, one key per invoice. */
function fulfilmentChecks(e: DemoEvidence): Check[] {
  const g = GUARANTEES.fulfilment;
  const checks = e.invoices.map((inv) => {
    const keys = new Set(inv.deliveries.map((d) => d.key));
    const ok =
      inv.fulfilmentIds.length === 1 &&
      inv.outboxStates.length === 1 &&
      inv.outboxStates[0] === 'delivered' &&
      inv.applied === 1 &&
      keys.size === 1 &&
      inv.deliveries[0]?.key === inv.fulfilmentIds[0] &&
      inv.deliveries.every((d) => d.signatureValid);
    return check(
      g,
      `${inv.id} fulfilled once`,
      ok,
      `${inv.deliveries.length} request(s), key ${[...keys].join(',')}, applied ${inv.applied}×`,
    );
  });
  const failed = e.invoices.find((i) => i.id === e.failOnceInvoice);
  checks.push(
    check(
      g,
      'failed delivery retried with the same Idempotency-Key',
      !!failed &&
        failed.deliveries.length >= 2 &&
        failed.deliveries[0].status >= 500 &&
        new Set(failed.deliveries.map((d) => d.key)).size === 1,
      failed ? failed.deliveries.map((d) => d.status).join(' → ') : 'missing',
    ),
  );
  return checks;
}

/** API idempotency: a replay returns the original, a conflict is refused, one row per business operation. */
function apiChecks(e: DemoEvidence): Check[] {
  const g = GUARANTEES.api;
  const created = e.api.filter((a) => a.status === 201 && !a.replayed);
  const replay = e.api.find((a) => a.replayed);
  const conflict = e.api.find((a) => a.status === 409 && a.code === 'IDEMPOTENCY_CONFLICT');
  const requested = new Set(created.map((c) => c.payoutId));
  return [
    check(
      g,
      'API replay returns the original',
      !!replay && created.some((c) => c.idempotencyKey === replay.idempotencyKey && c.rowId === replay.rowId),
      replay ? `key ${replay.idempotencyKey} → payout #${replay.rowId}` : 'no replay seen',
    ),
    check(
      g,
      'API conflict refused (409)',
      !!conflict,
      conflict ? `key ${conflict.idempotencyKey}: ${conflict.code}` : 'no 409 seen',
    ),
    check(
      g,
      'one payout row per business operation',
      e.payoutRows === requested.size,
      `${e.payoutRows} rows for ${requested.size} payoutIds`,
    ),
  ];
}

/** Payouts: each run to succeeded through faults and racing workers, its op executed once on chain. */
function payoutChecks(e: DemoEvidence): Check[] {
  const checks = e.payouts.map((p) => {
    const op = p.opAccount;
    return check(
      GUARANTEES.journal,
      `${p.payoutId} executed once on chain`,
      p.state === 'succeeded' &&
        op !== null &&
        big(op.amount) === big(p.amount) &&
        op.recipient === p.recipient &&
        p.successfulOpTransactions.length === 1 &&
        p.successfulOpTransactions[0] === p.signature &&
        big(p.recipientBalance) === big(p.amount) &&
        p.workerSignatures.every((s) => s === p.signature),
      `${p.state}, ${p.successfulOpTransactions.length} successful tx on op PDA, recipient holds ${p.recipientBalance}`,
    );
  });
  const paidOut = e.payouts.reduce((n, p) => n + big(p.amount), 0n);
  checks.push(
    check(
      GUARANTEES.payoutOnChain,
      'vault paid out exactly the payouts',
      big(e.vault.funded) - paidOut === big(e.vault.balance),
      `funded ${e.vault.funded} − payouts ${paidOut} = ${e.vault.balance}`,
    ),
  );
  return checks;
}

/** Every check, in the order of the demo's table. */
export function checkInvariants(e: DemoEvidence): Check[] {
  return [
    ...receiptChecks(e),
    ...moneyChecks(e),
    ...redeliveryChecks(e),
    ...fulfilmentChecks(e),
    ...apiChecks(e),
    ...payoutChecks(e),
  ];
}

export function brokenOf(checks: readonly Check[]): string[] {
  return checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
}
