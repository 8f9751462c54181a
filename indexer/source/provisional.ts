// Confirmed mode: after each finalized pass, read the confirmed blocks above the finalized checkpoint and keep
// their transfers as provisional rows (never credited), then settle rows the finalized checkpoint has passed:
// 'final' if the ledger holds the same receipt identity, 'reversed' if not (their block vanished from the chain
// the cluster finalized). The ledger's credits are untouched by any of this.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Receipt } from '../decode/receipt';
import type { RpcClient } from '../rpc';
import { DecodeBlockFn, readSlots } from './block-reader';

export interface ProvisionalResult {
  confirmedTarget: number;
  seen: number;
  final: number;
  reversed: number;
}

export interface ProvisionalTracker {
  /** Settle rows at or below `finalizedCheckpoint`, then record what the confirmed blocks above it hold. */
  afterFinalizedPass(cluster: string, finalizedCheckpoint: number, signal?: AbortSignal): Promise<ProvisionalResult>;
}

export function createProvisionalStore(db: Pool) {
  return {
    async upsert(cluster: string, rows: Array<{ slot: number; receipt: Receipt }>): Promise<void> {
      if (rows.length === 0) return;
      // Seen again (same or another confirmed slot): refresh it. A 'final' row never changes; a 'reversed' one seen
      // again in a confirmed block (its transaction landed on the surviving fork) is provisional once more.
      await db.query(
        `INSERT INTO provisional_receipts (cluster, signature, ix_index, inner_index, slot, mint, destination, destination_owner, amount)
         SELECT $1, u.signature, u.ix_index, u.inner_index, u.slot, u.mint, u.destination, u.destination_owner, u.amount
           FROM unnest($2::text[], $3::int[], $4::int[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::numeric[])
                AS u(signature, ix_index, inner_index, slot, mint, destination, destination_owner, amount)
         ON CONFLICT (cluster, signature, ix_index, inner_index)
         DO UPDATE SET slot = EXCLUDED.slot, state = 'provisional', settled_at = NULL
          WHERE provisional_receipts.state <> 'final'`,
        [
          cluster,
          rows.map((r) => r.receipt.signature),
          rows.map((r) => r.receipt.ixIndex),
          rows.map((r) => r.receipt.innerIndex),
          rows.map((r) => String(r.slot)),
          rows.map((r) => r.receipt.mint),
          rows.map((r) => r.receipt.destination),
          rows.map((r) => r.receipt.destinationOwner),
          rows.map((r) => r.receipt.amount.toString()),
        ],
      );
    },
    /** Settle every open row at or below `slot`; the ledger's receipts table is the judge. */
    async settle(cluster: string, slot: number): Promise<{ final: number; reversed: number }> {
      const { rows } = await db.query<{ state: string; n: number }>(
        `WITH settled AS (
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
        [cluster, String(slot)],
      );
      const n = (s: string) => rows.find((r) => r.state === s)?.n ?? 0;
      return { final: n('final'), reversed: n('reversed') };
    },
  };
}

export function createProvisionalTracker(deps: {
  db: Pool;
  rpc: Pick<RpcClient, 'getSlot' | 'getBlocks' | 'getBlock'>;
  decode: DecodeBlockFn;
  concurrency: number;
  maxSlots: number;
  log?: Logger;
}): ProvisionalTracker {
  const store = createProvisionalStore(deps.db);
  return {
    async afterFinalizedPass(cluster, finalizedCheckpoint, signal) {
      const settled = await store.settle(cluster, finalizedCheckpoint);
      const confirmedTarget = await deps.rpc.getSlot('confirmed', { signal });
      let seen = 0;
      if (confirmedTarget > finalizedCheckpoint) {
        const end = Math.min(confirmedTarget, finalizedCheckpoint + deps.maxSlots);
        const listed = await deps.rpc.getBlocks(finalizedCheckpoint + 1, end, 'confirmed', { signal });
        const outcomes = await readSlots({
          rpc: deps.rpc,
          decode: deps.decode,
          commitment: 'confirmed',
          slots: listed,
          concurrency: deps.concurrency,
          signal,
        });
        const rows = outcomes.flatMap((o) =>
          o.status === 'ok' ? o.receipts.map((receipt) => ({ slot: o.slot, receipt })) : [],
        );
        await store.upsert(cluster, rows);
        seen = rows.length;
      }
      if (settled.reversed > 0)
        deps.log?.warn(
          { cluster, reversed: settled.reversed },
          'provisional receipts reversed: their confirmed block did not become final',
        );
      return { confirmedTarget, seen, ...settled };
    },
  };
}
