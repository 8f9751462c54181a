// Pure: the final table a person can check, and the one-line JSON result, from evidence + checks.
import type { DemoEvidence } from './evidence';
import type { Check, Guarantee } from './invariants';
import { brokenOf, GUARANTEES } from './invariants';
import { short, tokens } from './narrator';

/** One section of docs/guarantees.md as the demo checked it. */
export interface GuaranteeChecked {
  guarantee: Guarantee;
  holds: boolean;
  checks: number;
  failed: number;
}

export interface DemoResult {
  /** HOLDS when every guarantee the demo checked held. */
  verdict: 'HOLDS' | 'BROKEN';
  guarantees: GuaranteeChecked[];
  broken: string[];
  evidence: DemoEvidence;
  checks: Check[];
}

export function demoResult(evidence: DemoEvidence, checks: Check[]): DemoResult {
  const broken = brokenOf(checks);
  const guarantees = Object.values(GUARANTEES).map((guarantee) => {
    const own = checks.filter((c) => c.guarantee === guarantee);
    const failed = own.filter((c) => !c.ok).length;
    return { guarantee, holds: own.length > 0 && failed === 0, checks: own.length, failed };
  });
  const verdict = broken.length === 0 && guarantees.every((g) => g.holds) ? 'HOLDS' : 'BROKEN';
  return { verdict, guarantees, broken, evidence, checks };
}

function pad(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd(),
  );
}

export function renderTable(r: DemoResult, decimals: number): string {
  const e = r.evidence;
  const t = (s: string) => tokens(BigInt(s), decimals);
  const out: string[] = [];
  out.push('Invoices (chain = balance of the deposit account; deliveries = requests the merchant endpoint saw)');
  out.push(
    ...pad([
      [
        'invoice',
        'expected',
        'paid on chain',
        'credited',
        'status',
        'receipts',
        'exceptions',
        'deliveries',
        'Idempotency-Key',
        'applied',
      ],
      ...e.invoices.map((i) => [
        i.id,
        t(i.expected),
        t(i.paidOnChain),
        t(i.credited),
        i.status,
        String(i.receipts),
        i.exceptions.map((x) => `${x.kind} ${t(x.amount)}`).join(', ') || '-',
        i.deliveries.map((d) => d.status).join('→') || '-',
        [...new Set(i.deliveries.map((d) => short(d.key ?? '-', 10)))].join(','),
        `${i.applied}×`,
      ]),
    ]).map((l) => `  ${l}`),
  );
  out.push('Receipt deliveries (receipt_delivery_counts)');
  out.push(
    ...pad([
      ['source', 'delivered', 'new', 'duplicates absorbed'],
      ...e.deliveriesBySource.map((d) => [d.source, String(d.delivered), String(d.inserted), String(d.duplicates)]),
    ]).map((l) => `  ${l}`),
  );
  const paymentRows = e.chainPayments.reduce((n, p) => n + (e.receiptsPerSignature[p.signature] ?? 0), 0);
  out.push(
    `  receipt rows: ${paymentRows} for the customers' ${e.chainPayments.reduce((n, p) => n + p.transfers, 0)} token transfers on chain` +
      ` (+ ${e.receiptRows - paymentRows} other transfers the indexer also saw, e.g. faucet airdrops: no invoice, no exception)`,
  );
  out.push(
    'Payouts (requested via the API — r = replayed — vs executed on chain; op txs = successful transactions on the op PDA, from the chain)',
  );
  out.push(
    ...pad([
      ['payout', 'API requests', 'amount', 'state', 'attempts', 'signature', 'op PDA', 'op txs', 'recipient holds'],
      ...e.payouts.map((p) => [
        p.payoutId,
        e.api
          .filter((a) => a.payoutId === p.payoutId)
          .map((a) => `${a.status}${a.replayed ? 'r' : ''}`)
          .join(','),
        t(p.amount),
        p.state,
        p.attempts.map((a) => a.status).join(','),
        p.signature ?? '-',
        p.opPda,
        String(p.successfulOpTransactions.length),
        t(p.recipientBalance),
      ]),
    ]).map((l) => `  ${l}`),
  );
  const apiLine = e.api
    .map((a) => `${a.status}${a.replayed ? ' (replayed)' : ''}${a.code ? ` ${a.code}` : ''}`)
    .join(', ');
  out.push(
    `  API answers: ${apiLine}; payout rows: ${e.payoutRows}; vault ${t(e.vault.funded)} → ${t(e.vault.balance)}`,
  );
  out.push('Checks');
  for (const c of r.checks) out.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name} — ${c.detail}`);
  out.push('Guarantees checked (docs/guarantees.md)');
  for (const g of r.guarantees) {
    const failed = g.failed > 0 ? `, ${g.failed} failed` : g.checks === 0 ? ', none ran' : '';
    out.push(`  ${g.holds ? 'HOLDS ' : 'BROKEN'}  ${g.guarantee} (${g.checks} checks${failed})`);
  }
  out.push(
    r.verdict === 'HOLDS'
      ? `guarantees: HOLD (${r.guarantees.length} of ${r.guarantees.length} sections)`
      : `guarantees: BROKEN\n${r.broken.map((b) => `  - ${b}`).join('\n')}`,
  );
  return out.join('\n');
}
