// Confirmed mode: after each finalized pass, read the confirmed blocks above the finalized checkpoint and keep
// their transfers as provisional rows (never credited), then settle rows the finalized checkpoint has passed:
// 'final' if the ledger holds the same receipt identity, 'reversed' if not (their block vanished from the chain
// the cluster finalized). The ledger's credits are untouched by any of this.
import type { Pool } from 'pg';
import { exec, rows } from '../../db/sql';
import type { Logger } from 'pino';
import type { Receipt } from '../decode/receipt';
import type { RpcClient } from '../rpc';
import { DecodeBlockFn, readSlots } from './block-reader';
import * as q from './queries';

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
    async upsert(cluster: string, seen: Array<{ slot: number; receipt: Receipt }>): Promise<void> {
      if (seen.length === 0) return;
      await exec(db, q.upsertProvisionalReceipts(cluster, seen));
    },
    /** Settle every open row at or below `slot`; the ledger's receipts table is the judge. */
    async settle(cluster: string, slot: number): Promise<{ final: number; reversed: number }> {
      const counts = await rows<{ state: string; n: number }>(db, q.settleProvisionalReceipts(cluster, slot));
      const n = (s: string) => counts.find((r) => r.state === s)?.n ?? 0;
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
