// Every statement the ledger runs, as a named function returning a Query (db/sql runs them). Arrays go in through
// unnest() so a batch is a handful of statements, not one per receipt.
import { arrayLiteral, type Query } from '../../db/sql';

export interface ReceiptColumns {
  signature: string[];
  ixIndex: number[];
  innerIndex: number[];
  slot: (string | null)[];
  blockTime: (string | null)[];
  program: string[];
  kind: string[];
  mint: (string | null)[];
  source: string[];
  destination: string[];
  destinationOwner: (string | null)[];
  amount: string[];
  /** The invoice the ledger matched the receipt to (planned under the invoice locks), or null. */
  invoiceId: (string | null)[];
}

/**
 * Insert a batch of receipts; rows whose identity exists already are skipped, and the answer lists only the rows
 * this statement inserted (RETURNING), which are the only ones the ledger may credit: each as its 1-based position
 * in the arrays and its new id (joined back on the server, so no signature travels back). The join takes the slot
 * too: a batch may hold one identity twice at two slots (a source that got it wrong; the ledger drops repeats only
 * as neighbours in chain order), and only the position that was inserted (the lower slot: it goes in first) may
 * answer for the row, else both would be credited. Rows go in in chain order
 * (slot, no slot last, then identity bytewise), the order the ledger's COPY sends them in, so two overlapping
 * batches wait on each other's unique-index entries in the same order instead of deadlocking.
 */
export function insertReceipts(cluster: string, firstSource: string, c: ReceiptColumns): Query {
  return {
    text: `WITH u AS MATERIALIZED (
             SELECT * FROM unnest($3::text[], $4::int[], $5::int[], $6::bigint[], $7::bigint[], $8::text[], $9::text[],
                                  $10::text[], $11::text[], $12::text[], $13::text[], $14::numeric[], $15::text[])
                           WITH ORDINALITY AS u(signature, ix_index, inner_index, slot, block_time, program, kind, mint,
                                                source, destination, destination_owner, amount, invoice_id, ord)),
           ins AS (
             INSERT INTO receipts (cluster, signature, ix_index, inner_index, slot, block_time, program, kind, mint,
                                   source, destination, destination_owner, amount, invoice_id, first_source)
             SELECT $1, u.signature, u.ix_index, u.inner_index, u.slot, u.block_time, u.program, u.kind, u.mint,
                    u.source, u.destination, u.destination_owner, u.amount, u.invoice_id, $2::receipt_source
               FROM u
              ORDER BY u.slot NULLS LAST, u.signature COLLATE "C", u.ix_index, u.inner_index
             ON CONFLICT ON CONSTRAINT receipts_identity DO NOTHING
             RETURNING id, signature, ix_index, inner_index, slot)
           SELECT u.ord::int AS ord, ins.id FROM ins JOIN u USING (signature, ix_index, inner_index)
            WHERE ins.slot IS NOT DISTINCT FROM u.slot`,
    values: [
      cluster,
      firstSource,
      ...[
        c.signature,
        c.ixIndex,
        c.innerIndex,
        c.slot,
        c.blockTime,
        c.program,
        c.kind,
        c.mint,
        c.source,
        c.destination,
        c.destinationOwner,
        c.amount,
        c.invoiceId,
      ].map(arrayLiteral),
    ],
  };
}

/**
 * One receipt, with the invoice the match gave it: its new id, or no row when its identity is in the ledger already
 * (the reference ledger, reference.ts: the rule one receipt at a time).
 */
export function insertReceipt(cluster: string, firstSource: string, r: ReceiptRow): Query {
  return {
    text: `INSERT INTO receipts (cluster, signature, ix_index, inner_index, slot, block_time, program, kind, mint,
                                  source, destination, destination_owner, amount, invoice_id, first_source)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::receipt_source)
           ON CONFLICT ON CONSTRAINT receipts_identity DO NOTHING
           RETURNING id`,
    values: [
      cluster,
      r.signature,
      r.ixIndex,
      r.innerIndex,
      r.slot,
      r.blockTime,
      r.program,
      r.kind,
      r.mint,
      r.source,
      r.destination,
      r.destinationOwner,
      r.amount,
      r.invoiceId,
      firstSource,
    ],
  };
}

/** One receipt's columns (ReceiptColumns for a single row). */
export type ReceiptRow = { [K in keyof ReceiptColumns]: ReceiptColumns[K][number] };

/** A batch of new receipts in COPY's text format (copy.ts receiptCopyText writes its rows, in these columns). */
export const COPY_RECEIPTS = `COPY receipts (cluster, signature, ix_index, inner_index, slot, block_time, program, kind, mint,
                       source, destination, destination_owner, amount, invoice_id, first_source) FROM STDIN`;

/** Around a COPY of receipts, which fails as a whole on an identity already there (copy-path.ts copyReceipts). */
export const savepoint = (): Query => ({ text: 'SAVEPOINT ledger_copy', values: [] });
export const releaseSavepoint = (): Query => ({ text: 'RELEASE SAVEPOINT ledger_copy', values: [] });
export const rollbackToSavepoint = (): Query => ({ text: 'ROLLBACK TO SAVEPOINT ledger_copy', values: [] });

/** The identities of some receipts, as parallel arrays. */
export interface Identities {
  signatures: string[];
  ixIndexes: number[];
  innerIndexes: number[];
}

/**
 * Each identity (u, with its 1-based position u.ord) joined to its row in `receipts` (x) by one probe of the unique
 * index: LATERAL … LIMIT 1 pins that plan; a plain join or NOT EXISTS lets the planner hash the whole receipts table
 * instead, which grows with the ledger.
 */
function byIdentity(cluster: string, ids: Identities, select: string, join: string, rest: string): Query {
  return {
    text: `SELECT ${select}
             FROM unnest($2::text[], $3::int[], $4::int[]) WITH ORDINALITY AS u(signature, ix_index, inner_index, ord)
             ${join} LATERAL (
                    SELECT r.id FROM receipts r
                     WHERE r.cluster = $1 AND r.signature = u.signature
                       AND r.ix_index = u.ix_index AND r.inner_index = u.inner_index
                     LIMIT 1) x ON true ${rest}`,
    values: [cluster, arrayLiteral(ids.signatures), arrayLiteral(ids.ixIndexes), arrayLiteral(ids.innerIndexes)],
  };
}

/** The ids of receipts in the ledger, by identity (1-based positions in the arrays). */
export function selectReceiptIds(cluster: string, ids: Identities): Query {
  return byIdentity(cluster, ids, 'u.ord::int AS ord, x.id', 'JOIN', '');
}

/**
 * Which receipts of a batch are not in the ledger yet (1-based positions). Only the identity travels, so a
 * mostly-duplicate batch (re-scans, replaying providers) costs an index probe per receipt and little else; the
 * insert that follows stays the authority when another transaction inserts the same rows meanwhile.
 */
export function selectUnknownReceipts(cluster: string, ids: Identities): Query {
  return byIdentity(cluster, ids, 'u.ord::int AS ord', 'LEFT JOIN', 'WHERE x.id IS NULL');
}

/**
 * The invoices a set of new receipts could pay, locked before the receipts go in. ORDER BY id makes every batch
 * take these row locks in the same order (the sort runs below the lock step), so concurrent batches queue
 * instead of deadlocking; bytewise (COLLATE "C"), which sorts without calling the database's collation.
 */
export function lockCandidateInvoices(addresses: string[], referenceKeys: string[]): Query {
  return {
    text: `SELECT id, merchant, mint, expected_amount, credited_amount, deposit_address, reference_key, status,
                  extract(epoch FROM created_at) AS created_epoch
             FROM invoices
            WHERE deposit_address = ANY($1::text[]) OR reference_key = ANY($2::text[])
            ORDER BY id COLLATE "C"
              FOR UPDATE`,
    values: [arrayLiteral(addresses), arrayLiteral(referenceKeys)],
  };
}

/** Only when a concurrent batch took some of our receipts between the probe and the insert (rare). */
export function setReceiptInvoices(ids: string[], invoiceIds: (string | null)[]): Query {
  return {
    text: `UPDATE receipts r SET invoice_id = u.invoice_id
             FROM unnest($1::bigint[], $2::text[]) AS u(id, invoice_id)
            WHERE r.id = u.id`,
    values: [ids, invoiceIds],
  };
}

export function updateInvoiceCredits(ids: string[], credited: string[], paid: boolean[]): Query {
  return {
    text: `UPDATE invoices i
              SET credited_amount = u.credited,
                  status = CASE WHEN u.paid THEN 'paid'::invoice_status ELSE i.status END,
                  paid_at = CASE WHEN u.paid AND i.paid_at IS NULL THEN now() ELSE i.paid_at END
             FROM unnest($1::text[], $2::numeric[], $3::bool[]) AS u(id, credited, paid)
            WHERE i.id = u.id`,
    values: [ids, credited, paid],
  };
}

export function insertExceptions(
  kinds: string[],
  receiptIds: string[],
  invoiceIds: (string | null)[],
  amounts: string[],
  details: string[],
): Query {
  return {
    text: `INSERT INTO exceptions (kind, receipt_id, invoice_id, amount, detail)
           SELECT u.kind::exception_kind, u.receipt_id, u.invoice_id, u.amount, u.detail
             FROM unnest($1::text[], $2::bigint[], $3::text[], $4::numeric[], $5::text[])
                  AS u(kind, receipt_id, invoice_id, amount, detail)
           ON CONFLICT (receipt_id, kind) DO NOTHING`,
    values: [kinds, receiptIds, invoiceIds, amounts, details],
  };
}

/**
 * One fulfilment per paid invoice, and its outbox row, in one statement. ON CONFLICT keeps it a no-op if the
 * invoice somehow had one already (UNIQUE (invoice_id) is the real guard).
 */
export function insertFulfilments(ids: string[], invoiceIds: string[], merchants: string[], payloads: string[]): Query {
  return {
    text: `WITH f AS (
             INSERT INTO fulfilments (id, invoice_id, merchant)
             SELECT u.id, u.invoice_id, u.merchant FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, invoice_id, merchant)
             ON CONFLICT (invoice_id) DO NOTHING
             RETURNING id, merchant)
           INSERT INTO outbox (fulfilment_id, idempotency_key, merchant, topic, payload)
           SELECT f.id, f.id, f.merchant, 'invoice.paid', u.payload
             FROM f JOIN unnest($1::text[], $4::jsonb[]) AS u(id, payload) ON u.id = f.id
           ON CONFLICT (fulfilment_id) DO NOTHING`,
    values: [ids, invoiceIds, merchants, payloads],
  };
}

export function bumpDeliveryCounts(cluster: string, source: string, delivered: number, inserted: number): Query {
  return {
    text: `INSERT INTO receipt_delivery_counts (cluster, source, delivered, inserted, duplicates)
           VALUES ($1, $2::receipt_source, $3::bigint, $4::bigint, $3::bigint - $4::bigint)
           ON CONFLICT (cluster, source) DO UPDATE
              SET delivered = receipt_delivery_counts.delivered + EXCLUDED.delivered,
                  inserted = receipt_delivery_counts.inserted + EXCLUDED.inserted,
                  duplicates = receipt_delivery_counts.duplicates + EXCLUDED.duplicates,
                  updated_at = now()`,
    values: [cluster, source, delivered, inserted],
  };
}

/** Checkpoints only move forward: a late or replayed batch never moves one back. */
export function advanceCheckpoint(cluster: string, source: string, slot: string): Query {
  return {
    text: `INSERT INTO checkpoints (cluster, source, slot) VALUES ($1, $2::receipt_source, $3)
           ON CONFLICT (cluster, source) DO UPDATE
              SET slot = GREATEST(checkpoints.slot, EXCLUDED.slot),
                  updated_at = CASE WHEN EXCLUDED.slot > checkpoints.slot THEN now() ELSE checkpoints.updated_at END`,
    values: [cluster, source, slot],
  };
}

export function getCheckpoint(cluster: string, source: string): Query {
  return {
    text: `SELECT slot FROM checkpoints WHERE cluster = $1 AND source = $2::receipt_source`,
    values: [cluster, source],
  };
}

export function insertInvoice(inv: {
  id: string;
  merchant: string;
  mint: string;
  expected: string;
  depositAddress: string | null;
  referenceKey: string | null;
}): Query {
  return {
    text: `INSERT INTO invoices (id, merchant, mint, expected_amount, deposit_address, reference_key)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT DO NOTHING
           RETURNING id`,
    values: [inv.id, inv.merchant, inv.mint, inv.expected, inv.depositAddress, inv.referenceKey],
  };
}

export function getInvoice(id: string): Query {
  return {
    text: `SELECT id, merchant, mint, expected_amount, credited_amount, deposit_address, reference_key, status, paid_at
             FROM invoices WHERE id = $1`,
    values: [id],
  };
}

export function reportInvoices(): Query {
  return {
    text: `SELECT id, merchant, mint, expected_amount::text AS expected, credited_amount::text AS credited, status,
                  to_char(paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS paid_at
             FROM invoices ORDER BY id`,
    values: [],
  };
}

export function reportReceipts(): Query {
  return {
    text: `SELECT first_source, count(*)::bigint AS n, count(invoice_id)::bigint AS matched
             FROM receipts GROUP BY first_source ORDER BY first_source`,
    values: [],
  };
}

export function reportDeliveries(): Query {
  return {
    text: `SELECT cluster, source, delivered, inserted, duplicates FROM receipt_delivery_counts ORDER BY cluster, source`,
    values: [],
  };
}

export function reportExceptions(): Query {
  return {
    text: `SELECT kind, count(*)::bigint AS n, sum(amount)::text AS amount FROM exceptions GROUP BY kind ORDER BY kind`,
    values: [],
  };
}

export function reportOutbox(): Query {
  return { text: `SELECT state, count(*)::bigint AS n FROM outbox GROUP BY state ORDER BY state`, values: [] };
}

export function reportCheckpoints(): Query {
  return { text: `SELECT cluster, source, slot::text AS slot FROM checkpoints ORDER BY cluster, source`, values: [] };
}
