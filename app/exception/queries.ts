// Every SQL statement about ledger exceptions and how they were settled (exception_resolutions, migration 0140).
// Amounts cross as decimal strings (NUMERIC ↔ bigint).
import { Db } from '../payout/queries';
import { EXCEPTION_STATES, ExceptionFilter, ExceptionRow, ExceptionState, ExceptionTotals } from './types';

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

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

function toException(r: Raw): ExceptionRow {
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

export async function listExceptions(db: Db, f: ExceptionFilter = {}): Promise<ExceptionRow[]> {
  const { rows } = await db.query(
    `SELECT * FROM (${SELECT}) s
      WHERE ($1::exception_kind IS NULL OR kind = $1) AND ($2::text IS NULL OR invoice_id = $2) AND ($3::text IS NULL OR state = $3)
      ORDER BY id`,
    [f.kind ?? null, f.invoiceId ?? null, f.state ?? null],
  );
  return rows.map(toException);
}

/** One exception; `lock` takes FOR UPDATE on it (inside a transaction) so two settlers queue. */
export async function getException(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<ExceptionRow | null> {
  if (!/^[0-9]{1,18}$/.test(id)) return null;
  if (opts.lock) await db.query('SELECT id FROM exceptions WHERE id = $1 FOR UPDATE', [id]);
  const { rows } = await db.query(`${SELECT} WHERE e.id = $1`, [id]);
  return rows[0] ? toException(rows[0]) : null;
}

/** Link a refund payout to its exception; a no-op returning false if the exception is already settled. */
export async function insertRefundLink(db: Db, exceptionId: string, payoutRowId: string): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO exception_resolutions (exception_id, resolution, payout_id) VALUES ($1, 'refund', $2) ON CONFLICT (exception_id) DO NOTHING`,
    [exceptionId, payoutRowId],
  );
  return r.rowCount === 1;
}

export async function insertResolved(db: Db, exceptionId: string, note: string): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO exception_resolutions (exception_id, resolution, note) VALUES ($1, 'resolved', $2) ON CONFLICT (exception_id) DO NOTHING`,
    [exceptionId, note],
  );
  return r.rowCount === 1;
}

/** The registered merchant (api_merchants id) whose vault received the money, if exactly one does. */
export async function merchantIdByVault(db: Db, vault: string): Promise<string | null> {
  const { rows } = await db.query('SELECT id FROM api_merchants WHERE vault = $1 ORDER BY id LIMIT 2', [vault]);
  return rows.length === 1 ? String(rows[0].id) : null;
}

/** Count and sum of exceptions per state (every state present, zero when none). */
export async function exceptionTotals(db: Db): Promise<ExceptionTotals> {
  const { rows } = await db.query(
    `SELECT state, count(*)::bigint AS n, COALESCE(sum(amount::numeric), 0)::text AS amount FROM (${SELECT}) s GROUP BY state`,
  );
  const out = Object.fromEntries(EXCEPTION_STATES.map((s) => [s, { count: 0, amount: 0n }])) as ExceptionTotals;
  for (const r of rows) out[r.state as ExceptionState] = { count: Number(r.n), amount: BigInt(r.amount) };
  return out;
}

/** exceptionTotals with amounts as decimal strings: the `exceptionStates` of `oncepay report --json`. */
export async function exceptionStates(db: Db): Promise<Record<ExceptionState, { count: number; amount: string }>> {
  const t = await exceptionTotals(db);
  return Object.fromEntries(
    EXCEPTION_STATES.map((s) => [s, { count: t[s].count, amount: t[s].amount.toString() }]),
  ) as Record<ExceptionState, { count: number; amount: string }>;
}
