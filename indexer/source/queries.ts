// Every statement the sources run besides the ledger's own (indexer/ledger/queries.ts), as Queries that db/sql
// runs: the confirmed-mode provisional receipts (migration 0051).
import type { Query } from '../../db/sql';
import type { Receipt } from '../decode/receipt';

/**
 * Keep what a confirmed block holds. Seen again (same or another confirmed slot): refresh it. A 'final' row never
 * changes; a 'reversed' one seen again in a confirmed block (its transaction landed on the surviving fork) is
 * provisional once more.
 */
export function upsertProvisionalReceipts(cluster: string, seen: Array<{ slot: number; receipt: Receipt }>): Query {
  return {
    text: `INSERT INTO provisional_receipts (cluster, signature, ix_index, inner_index, slot, mint, destination, destination_owner, amount)
           SELECT $1, u.signature, u.ix_index, u.inner_index, u.slot, u.mint, u.destination, u.destination_owner, u.amount
             FROM unnest($2::text[], $3::int[], $4::int[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::numeric[])
                  AS u(signature, ix_index, inner_index, slot, mint, destination, destination_owner, amount)
           ON CONFLICT (cluster, signature, ix_index, inner_index)
           DO UPDATE SET slot = EXCLUDED.slot, state = 'provisional', settled_at = NULL
            WHERE provisional_receipts.state <> 'final'`,
    values: [
      cluster,
      seen.map((r) => r.receipt.signature),
      seen.map((r) => r.receipt.ixIndex),
      seen.map((r) => r.receipt.innerIndex),
      seen.map((r) => String(r.slot)),
      seen.map((r) => r.receipt.mint),
      seen.map((r) => r.receipt.destination),
      seen.map((r) => r.receipt.destinationOwner),
      seen.map((r) => r.receipt.amount.toString()),
    ],
  };
}

/**
 * Settle every open row at or below `slot`: 'final' when the ledger's receipts hold the same identity, 'reversed'
 * when not. Returns one row per resulting state with its count.
 */
export function settleProvisionalReceipts(cluster: string, slot: number): Query {
  return {
    text: `WITH settled AS (
             UPDATE provisional_receipts p
                SET state = CASE WHEN EXISTS (
                              SELECT 1 FROM receipts r
                               WHERE r.cluster = p.cluster AND r.signature = p.signature
                                 AND r.ix_index = p.ix_index AND r.inner_index = p.inner_index)
                            THEN 'final'::provisional_state ELSE 'reversed'::provisional_state END,
                    settled_at = now()
              WHERE p.cluster = $1 AND p.state = 'provisional' AND p.slot <= $2
             RETURNING p.state)
           SELECT state::text, count(*)::int AS n FROM settled GROUP BY state`,
    values: [cluster, String(slot)],
  };
}
