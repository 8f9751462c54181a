// `oncepay report`: the ledger's totals (ledger.report(), the stable JSON) and their plain-text form (pure).
import type { LedgerReport } from './ledger/types';

export function formatReport(r: LedgerReport): string {
  const lines = [
    `invoices: ${r.invoices.length} (${r.invoices.filter((i) => i.status === 'paid').length} paid)`,
    ...r.invoices.map((i) => `  ${i.id}  ${i.status.padEnd(4)}  ${i.credited}/${i.expected} ${i.mint}`),
    `receipts: ${r.receipts.total} (${r.receipts.matched} matched)`,
    ...r.deliveries.map((d) => `  ${d.cluster}/${d.source}: delivered ${d.delivered}, new ${d.inserted}, duplicates ${d.duplicates}`),
    `exceptions: ${Object.entries(r.exceptions).map(([k, v]) => `${k} ${v.count} (${v.amount})`).join(', ') || 'none'}`,
    `outbox: ${Object.entries(r.outbox).map(([k, v]) => `${k} ${v}`).join(', ')}`,
    ...r.checkpoints.map((c) => `checkpoint ${c.cluster}/${c.source}: slot ${c.slot}`),
  ];
  return `${lines.join('\n')}\n`;
}
