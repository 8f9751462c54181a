// Trusted intake (`--trust-provider`): the delivery's own decoded (balance-checked) receipts are applied through the
// ledger at once. Apply first, record the event last: a crash in between means a redelivery re-applies (harmless,
// the ledger inserts each receipt once) instead of a recorded event whose receipts were never applied.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { WEBHOOK_CODES } from '../../common/errors/codes';
import { failpoint } from '../../common/failpoint';
import type { Receipt } from '../decode/receipt';
import type { LedgerPort, SourceMetrics } from './ports';
import type { ItemRefusal } from './webhook-plan';
import { deadLetterRows, Delivery, eventRecord } from './webhook-records';
import { createWebhookStore } from './webhook-store';

export interface TrustedDeps {
  db: Pool;
  ledger: Pick<LedgerPort, 'applyBatch'>;
  cluster: string;
  metrics: SourceMetrics;
  log?: Logger;
}

export type TrustedOutcome =
  /** Every item was refused (all dead-lettered): the answer is 400 with the first refusal. */
  | { allRefused: true; refused: ItemRefusal[] }
  | { allRefused: false; refused: ItemRefusal[]; duplicate: boolean; inserted: number; duplicates: number };

/**
 * Applies the receipts (receipts[i] came from item itemOf[i]); a receipt the ledger rejects refuses its item. Writes
 * the dead letters, then the event record; counts and logs the outcome. `refused` comes back in index order.
 */
export async function applyTrusted(
  deps: TrustedDeps,
  d: Delivery,
  receipts: readonly Receipt[],
  itemOf: readonly number[],
  refusedBefore: readonly ItemRefusal[],
): Promise<TrustedOutcome> {
  const store = createWebhookStore(deps.db);
  const refused = [...refusedBefore];
  let inserted = 0;
  let duplicates = 0;
  if (receipts.length > 0) {
    const applied = await deps.ledger.applyBatch({ cluster: deps.cluster, source: 'webhook', receipts: [...receipts] });
    inserted = applied.inserted;
    duplicates = applied.duplicates;
    for (const r of applied.rejected ?? []) {
      const index = itemOf[r.index];
      if (!refused.some((b) => b.index === index))
        refused.push({ index, code: WEBHOOK_CODES.RECEIPT_REJECTED, message: `${r.code}: ${r.message}` });
    }
  }
  failpoint('webhook.after_apply');
  refused.sort((a, b) => a.index - b.index);
  if (refused.length > 0)
    deps.log?.warn({ provider: d.provider, eventId: d.eventId, bad: refused }, 'webhook items dead-lettered');
  await store.deadLetter(deadLetterRows(d, refused));

  if (d.items > 0 && refused.length === d.items) return { allRefused: true, refused };
  const record = eventRecord(d, refused.length, receipts.length, inserted);
  const duplicate = record !== null && !(await store.recordEvent(record));
  deps.metrics.countWebhook(d.bucket, duplicate ? 'duplicate' : refused.length > 0 ? 'partial' : 'applied');
  deps.log?.info(
    {
      provider: d.provider,
      eventId: d.eventId,
      items: d.items,
      receipts: receipts.length,
      inserted,
      duplicates,
      deadLettered: refused.length,
    },
    'webhook delivery applied (trusted, not verified)',
  );
  return { allRefused: false, refused, duplicate, inserted, duplicates };
}
