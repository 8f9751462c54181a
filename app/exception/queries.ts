// Every SQL statement about ledger exceptions and how they were settled (exception_resolutions, migration 0140), as
// Queries that db/sql runs (app/exception/store.ts). Amounts cross as decimal strings (NUMERIC ↔ bigint).
import type { Query } from '../../db/sql';
import type { ExceptionFilter, ExceptionScope } from './types';

// The state is derived in SQL once, so list, show and report agree.
const STATE_SQL = `CASE WHEN x.resolution IS NULL THEN 'open'
                        WHEN x.resolution = 'resolved' THEN 'resolved'
                        WHEN p.state IN ('succeeded', 'conflict') THEN 'refunded'
                        WHEN p.state = 'failed' THEN 'refund_failed'
                        ELSE 'refunding' END`;

const SELECT = `SELECT e.id, e.kind, e.invoice_id, e.amount::text AS amount, e.detail, e.created_at,
                       r.cluster, r.signature, r.ix_index, r.inner_index, r.slot, r.mint, r.source, r.destination, r.destination_owner,
                       x.resolution, x.payout_id AS refund_payout_id, x.note, x.created_at AS resolved_at,
                       ${STATE_SQL} AS state
                  FROM exceptions e
                  JOIN receipts r ON r.id = e.receipt_id
             LEFT JOIN exception_resolutions x ON x.exception_id = e.id
             LEFT JOIN payouts p ON p.id = x.payout_id`;

/**
 * SQL condition: the exception is merchant $n's (NULL: anyone's) — its money arrived in that merchant's vault, or
 * it is about that merchant's API invoice (paid to its receiving wallet: POST /v1/invoices), or that merchant's
 * payout refunded it — or, when $n+1 is true, no registered merchant's (ExceptionScope.orUnowned). The one
 * definition of an exception's merchant for list, show, refund, resolve and totals.
 */
function ofMerchant(n: number): string {
  return `($${n}::bigint IS NULL OR r.destination = (SELECT m.vault FROM api_merchants m WHERE m.id = $${n})
           OR e.invoice_id IN (SELECT ai.ledger_invoice_id FROM api_invoices ai WHERE ai.merchant_id = $${n})
           OR p.merchant_id = $${n}
           OR ($${n + 1}::boolean AND p.id IS NULL AND NOT EXISTS (SELECT 1 FROM api_merchants m WHERE m.vault = r.destination)
               AND NOT EXISTS (SELECT 1 FROM api_invoices ai WHERE ai.ledger_invoice_id = e.invoice_id)))`;
}

const scopeValues = (s: ExceptionScope) => [s.merchantId ?? null, s.orUnowned === true];

export function listExceptions(f: ExceptionFilter = {}, scope: ExceptionScope = {}): Query {
  return {
    text: `${SELECT}
            WHERE ($1::exception_kind IS NULL OR e.kind = $1) AND ($2::text IS NULL OR e.invoice_id = $2)
              AND ($3::text IS NULL OR ${STATE_SQL} = $3) AND ${ofMerchant(4)}
            ORDER BY e.id`,
    values: [f.kind ?? null, f.invoiceId ?? null, f.state ?? null, ...scopeValues(scope)],
  };
}

/** One exception, if it is in scope. */
export function getException(id: string, scope: ExceptionScope = {}): Query {
  return { text: `${SELECT} WHERE e.id = $1 AND ${ofMerchant(2)}`, values: [id, ...scopeValues(scope)] };
}

/**
 * Inside a transaction: two settlers of one exception queue on this row lock. Read the exception again after it
 * (a new statement sees what the settler before committed).
 */
export function lockException(id: string): Query {
  return { text: 'SELECT id FROM exceptions WHERE id = $1 FOR UPDATE', values: [id] };
}

/** Links a refund payout to its exception; touches no row if the exception is already settled. */
export function insertRefundLink(exceptionId: string, payoutRowId: string): Query {
  return {
    text: `INSERT INTO exception_resolutions (exception_id, resolution, payout_id) VALUES ($1, 'refund', $2) ON CONFLICT (exception_id) DO NOTHING`,
    values: [exceptionId, payoutRowId],
  };
}

/** Closes an exception without moving money; touches no row if it is already settled. */
export function insertResolved(exceptionId: string, note: string): Query {
  return {
    text: `INSERT INTO exception_resolutions (exception_id, resolution, note) VALUES ($1, 'resolved', $2) ON CONFLICT (exception_id) DO NOTHING`,
    values: [exceptionId, note],
  };
}

/** The merchant whose API invoice (api_invoices) is the ledger invoice `ledgerInvoiceId`, if any. */
export function merchantIdByApiInvoice(ledgerInvoiceId: string): Query {
  return { text: 'SELECT merchant_id AS id FROM api_invoices WHERE ledger_invoice_id = $1', values: [ledgerInvoiceId] };
}

/** At most two registered merchants (api_merchants) whose vault is `vault`: the caller wants exactly one. */
export function merchantIdsByVault(vault: string): Query {
  return { text: 'SELECT id FROM api_merchants WHERE vault = $1 ORDER BY id LIMIT 2', values: [vault] };
}

/** Count and sum of exceptions per state (states with none are absent), of one merchant or of all. */
export function exceptionTotals(scope: ExceptionScope = {}): Query {
  return {
    text: `SELECT state, count(*)::bigint AS n, COALESCE(sum(amount::numeric), 0)::text AS amount
             FROM (${SELECT} WHERE ${ofMerchant(1)}) s GROUP BY state`,
    values: scopeValues(scope),
  };
}
