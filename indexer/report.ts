// `oncepay report`: the ledger's totals (readReport, the stable JSON, which ledger.report() returns) and their
// plain-text form (formatReport, pure). The rows of the report's six queries become the report in reportOf (pure).
import type { QueryResultRow } from 'pg';
import { Db, rows } from '../db/sql';
import * as q from './ledger/queries';
import type { LedgerReport } from './ledger/types';

/** The rows of the six report queries (ledger/queries.ts report*), as PostgreSQL returns them. */
export interface ReportRows {
  invoices: QueryResultRow[];
  receipts: QueryResultRow[];
  deliveries: QueryResultRow[];
  exceptions: QueryResultRow[];
  outbox: QueryResultRow[];
  checkpoints: QueryResultRow[];
}

export async function readReport(db: Db): Promise<LedgerReport> {
  const [invoices, receipts, deliveries, exceptions, outbox, checkpoints] = await Promise.all(
    [
      q.reportInvoices(),
      q.reportReceipts(),
      q.reportDeliveries(),
      q.reportExceptions(),
      q.reportOutbox(),
      q.reportCheckpoints(),
    ].map((query) => rows(db, query)),
  );
  return reportOf({ invoices, receipts, deliveries, exceptions, outbox, checkpoints });
}

export function reportOf(rows: ReportRows): LedgerReport {
  const bySource: Record<string, number> = {};
  let total = 0;
  let matched = 0;
  for (const r of rows.receipts) {
    bySource[r.first_source] = Number(r.n);
    total += Number(r.n);
    matched += Number(r.matched);
  }
  const exceptions: LedgerReport['exceptions'] = {};
  for (const r of rows.exceptions) exceptions[r.kind] = { count: Number(r.n), amount: r.amount };
  const outbox: Record<string, number> = { pending: 0, delivering: 0, delivered: 0, dead: 0 };
  for (const r of rows.outbox) outbox[r.state] = Number(r.n);
  return {
    invoices: rows.invoices.map((r) => ({
      id: r.id,
      merchant: r.merchant,
      mint: r.mint,
      expected: r.expected,
      credited: r.credited,
      status: r.status,
      paidAt: r.paid_at,
    })),
    receipts: { total, matched, bySource },
    deliveries: rows.deliveries.map((r) => ({
      cluster: r.cluster,
      source: r.source,
      delivered: Number(r.delivered),
      inserted: Number(r.inserted),
      duplicates: Number(r.duplicates),
    })),
    exceptions,
    outbox,
    checkpoints: rows.checkpoints as LedgerReport['checkpoints'],
  };
}

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
