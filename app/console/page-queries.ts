// The console's read statements over the other parts' tables (invoices, receipts, payouts, outbox, checkpoints,
// receipt_delivery_counts). Every list is bounded (LIMIT $n, at most PAGE_SIZE + 1 rows to know whether a next page
// exists) and pages by keyset (`before` = the last row's id), never by OFFSET. Amounts cross as text.
import type { Query } from '../../db/sql';

export const PAGE_SIZE = 50;

/** Invoices newest first; the cursor is an invoice id (its created_at, id pair is the key). */
export function listInvoices(before: string | null, limit: number): Query {
  return {
    text: `SELECT i.id, i.merchant, i.mint, i.expected_amount::text AS expected_amount, i.credited_amount::text AS credited_amount,
                  i.status, i.reference_key, i.deposit_address, i.created_at, i.paid_at,
                  (SELECT count(*)::int FROM receipts r WHERE r.invoice_id = i.id) AS receipts,
                  (SELECT count(*)::int FROM exceptions e WHERE e.invoice_id = i.id) AS exceptions
             FROM invoices i
            WHERE $1::text IS NULL OR (i.created_at, i.id) < (SELECT created_at, id FROM invoices WHERE id = $1)
            ORDER BY i.created_at DESC, i.id DESC LIMIT $2`,
    values: [before, limit],
  };
}

export function getInvoice(id: string): Query {
  return {
    text: `SELECT i.id, i.merchant, i.mint, i.expected_amount::text AS expected_amount, i.credited_amount::text AS credited_amount,
                  i.status, i.reference_key, i.deposit_address, i.created_at, i.paid_at, 0 AS receipts, 0 AS exceptions
             FROM invoices i WHERE i.id = $1`,
    values: [id],
  };
}

/** An invoice's receipts in chain order (bounded: an invoice paid a thousand times shows the first thousand). */
export function receiptsOfInvoice(invoiceId: string, limit: number): Query {
  return {
    text: `SELECT id, cluster, signature, ix_index, inner_index, slot::text AS slot, mint, source, amount::text AS amount,
                  first_source, created_at
             FROM receipts WHERE invoice_id = $1 ORDER BY slot NULLS LAST, id LIMIT $2`,
    values: [invoiceId, limit],
  };
}

/** Payouts of every merchant, newest first, with their merchant's name. */
export function listPayouts(before: string | null, limit: number): Query {
  return {
    text: `SELECT p.id FROM payouts p WHERE $1::bigint IS NULL OR p.id < $1 ORDER BY p.id DESC LIMIT $2`,
    values: [before, limit],
  };
}

export function merchantNames(): Query {
  return { text: `SELECT id, name FROM api_merchants`, values: [] };
}

/** Dead letters (outbox rows in state dead), newest first. */
export function listDeadLetters(before: string | null, limit: number): Query {
  return {
    text: `SELECT id, fulfilment_id, merchant, topic, attempts, last_error, last_status, updated_at, created_at
             FROM outbox WHERE state = 'dead' AND ($1::bigint IS NULL OR id < $1)
            ORDER BY id DESC LIMIT $2`,
    values: [before, limit],
  };
}

/** Outbox rows of any state by id (what a replay did to a row shows on the next page). */
export function recentDeliveries(limit: number): Query {
  return {
    text: `SELECT id, fulfilment_id, merchant, state, attempts, last_status, delivered_at
             FROM outbox WHERE state = 'delivered' ORDER BY delivered_at DESC NULLS LAST LIMIT $1`,
    values: [limit],
  };
}

/** The durable delivery counters behind oncepay_receipt_duplicates_total (per cluster and source). */
export function deliveryCounts(): Query {
  return {
    text: `SELECT cluster, source::text AS source, delivered::text AS delivered, inserted::text AS inserted,
                  duplicates::text AS duplicates, updated_at
             FROM receipt_delivery_counts ORDER BY cluster, source`,
    values: [],
  };
}

/** The checkpoints behind oncepay_checkpoint_lag_slots (lag = chain tip − slot). */
export function checkpoints(): Query {
  return {
    text: `SELECT cluster, source::text AS source, slot::text AS slot, updated_at,
                  extract(epoch FROM now() - updated_at)::float8 AS age_seconds
             FROM checkpoints ORDER BY cluster, source`,
    values: [],
  };
}

/** Exceptions newest first, as app/exception lists them, by id cursor. */
export function exceptionIds(before: string | null, limit: number): Query {
  return {
    text: `SELECT id FROM exceptions WHERE $1::bigint IS NULL OR id < $1 ORDER BY id DESC LIMIT $2`,
    values: [before, limit],
  };
}
