// Reads and writes of ledger exceptions and their settlements: app/exception/queries.ts's statements run through
// db/sql, rows mapped to ExceptionRow (amounts NUMERIC text → bigint).
import { Db, exec, one, rows } from '../../db/sql';
import type { ReceiptSqlColumns } from '../../indexer/ledger/types';
import * as q from './queries';
import {
  EXCEPTION_STATES,
  ExceptionFilter,
  ExceptionRow,
  ExceptionScope,
  ExceptionState,
  ExceptionTotals,
} from './types';

/** A row of queries.ts's exception SELECT: the exception and its receipt's columns. */
interface ExceptionSqlRow extends ReceiptSqlColumns {
  id: string;
  kind: ExceptionRow['kind'];
  invoice_id: string | null;
  amount: string;
  detail: string | null;
  created_at: Date;
  destination: string;
  destination_owner: string | null;
  resolution: 'refund' | 'resolved' | null;
  refund_payout_id: string | null;
  note: string | null;
  resolved_at: Date;
  state: ExceptionState;
}

function toException(r: ExceptionSqlRow): ExceptionRow {
  return {
    id: String(r.id),
    kind: r.kind,
    invoiceId: r.invoice_id,
    amount: BigInt(r.amount),
    detail: r.detail,
    createdAt: r.created_at,
    receipt: {
      cluster: r.cluster,
      signature: r.signature,
      ixIndex: Number(r.ix_index),
      innerIndex: Number(r.inner_index),
      slot: r.slot === null ? null : BigInt(r.slot),
      mint: r.mint,
      source: r.source,
      destination: r.destination,
      destinationOwner: r.destination_owner,
    },
    state: r.state,
    resolution: r.resolution
      ? {
          kind: r.resolution,
          payoutRowId: r.refund_payout_id === null ? null : String(r.refund_payout_id),
          note: r.note,
          at: r.resolved_at,
        }
      : null,
  };
}

export async function listExceptions(
  db: Db,
  f: ExceptionFilter = {},
  scope: ExceptionScope = {},
): Promise<ExceptionRow[]> {
  return (await rows<ExceptionSqlRow>(db, q.listExceptions(f, scope))).map(toException);
}

/**
 * One exception (of the scope's merchant, when given: another merchant's is null, as a missing one); `lock` takes
 * FOR UPDATE on it (inside a transaction) so two settlers queue.
 */
export async function getException(
  db: Db,
  id: string,
  opts: { lock?: boolean } & ExceptionScope = {},
): Promise<ExceptionRow | null> {
  if (!/^[0-9]{1,18}$/.test(id)) return null;
  // Locked only once it is known to be in scope: another merchant's exception is neither read nor locked.
  if (opts.lock && (await one(db, q.getException(id, opts))) === null) return null;
  if (opts.lock) await exec(db, q.lockException(id));
  const r = await one<ExceptionSqlRow>(db, q.getException(id, opts));
  return r ? toException(r) : null;
}

/** Link a refund payout to its exception; a no-op returning false if the exception is already settled. */
export async function insertRefundLink(db: Db, exceptionId: string, payoutRowId: string): Promise<boolean> {
  return (await exec(db, q.insertRefundLink(exceptionId, payoutRowId))) === 1;
}

export async function insertResolved(db: Db, exceptionId: string, note: string): Promise<boolean> {
  return (await exec(db, q.insertResolved(exceptionId, note))) === 1;
}

/** The registered merchant (api_merchants id) whose vault received the money, if exactly one does. */
export async function merchantIdByVault(db: Db, vault: string): Promise<string | null> {
  const found = await rows<{ id: string }>(db, q.merchantIdsByVault(vault));
  return found.length === 1 ? String(found[0].id) : null;
}

/** The merchant whose API invoice the exception is about (its receiving wallet got the money), if any. */
export async function merchantIdByApiInvoice(db: Db, ledgerInvoiceId: string | null): Promise<string | null> {
  if (ledgerInvoiceId === null) return null;
  const found = await one<{ id: string }>(db, q.merchantIdByApiInvoice(ledgerInvoiceId));
  return found ? String(found.id) : null;
}

/** Count and sum of exceptions per state (every state present, zero when none). */
export async function exceptionTotals(db: Db, scope: ExceptionScope = {}): Promise<ExceptionTotals> {
  const out = Object.fromEntries(EXCEPTION_STATES.map((s) => [s, { count: 0, amount: 0n }])) as ExceptionTotals;
  for (const r of await rows<{ state: ExceptionState; n: string; amount: string }>(db, q.exceptionTotals(scope)))
    out[r.state] = { count: Number(r.n), amount: BigInt(r.amount) };
  return out;
}
/** exceptionTotals with amounts as decimal strings: the `exceptionStates` of `oncepay report --json`. */
export async function exceptionStates(db: Db): Promise<Record<ExceptionState, { count: number; amount: string }>> {
  const t = await exceptionTotals(db);
  return Object.fromEntries(
    EXCEPTION_STATES.map((s) => [s, { count: t[s].count, amount: t[s].amount.toString() }]),
  ) as Record<ExceptionState, { count: number; amount: string }>;
}
