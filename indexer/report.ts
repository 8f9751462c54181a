// `oncepay report`: the ledger's totals (ledger.report(), the stable JSON) and their plain-text form (pure).
import type { LedgerReport } from './ledger/types';

/** How the exceptions were settled (app/exception: open, refunding, refunded, refund_failed, resolved): count and sum. */
export type ExceptionStates = Record<string, { count: number; amount: string }>;

export function formatReport(r: LedgerReport & { exceptionStates?: ExceptionStates }): string {
  const lines = [
    `invoices: ${r.invoices.length} (${r.invoices.filter((i) => i.status === 'paid').length} paid)`,
    ...r.invoices.map((i) => `  ${i.id}  ${i.status.padEnd(4)}  ${i.credited}/${i.expected} ${i.mint}`),
    `receipts: ${r.receipts.total} (${r.receipts.matched} matched)`,
    ...r.deliveries.map(
      (d) => `  ${d.cluster}/${d.source}: delivered ${d.delivered}, new ${d.inserted}, duplicates ${d.duplicates}`,
    ),
    `exceptions: ${
      Object.entries(r.exceptions)
        .map(([k, v]) => `${k} ${v.count} (${v.amount})`)
        .join(', ') || 'none'
    }`,
    ...(r.exceptionStates
      ? [
          `exceptions by state: ${Object.entries(r.exceptionStates)
            .map(([k, v]) => `${k} ${v.count} (${v.amount})`)
            .join(', ')}`,
        ]
      : []),
    `outbox: ${Object.entries(r.outbox)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    ...r.checkpoints.map((c) => `checkpoint ${c.cluster}/${c.source}: slot ${c.slot}`),
  ];
  return `${lines.join('\n')}\n`;
}
