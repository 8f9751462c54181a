// The probe: which receipts of a batch the ledger does not hold yet, asked by identity only (their keys, not their
// rows), so a mostly-duplicate batch costs little more than its keys. prediction.ts says when it is skipped.
import type { PoolClient } from 'pg';
import { rows } from '../../db/sql';
import type { Receipt } from '../decode/receipt';
import * as q from './queries';

/** The receipts' identities as statement columns (cluster aside). */
export function identities(receipts: readonly Receipt[]): q.Identities {
  return {
    signatures: receipts.map((r) => r.signature),
    ixIndexes: receipts.map((r) => r.ixIndex),
    innerIndexes: receipts.map((r) => r.innerIndex),
  };
}

/** The receipts of a batch (without repeats) not in the ledger yet, in batch order. */
export async function unknownReceipts(client: PoolClient, cluster: string, batch: Receipt[]): Promise<Receipt[]> {
  const unknown = await rows<{ ord: number }>(client, q.selectUnknownReceipts(cluster, identities(batch)));
  return unknown.map((r) => batch[r.ord - 1]);
}
