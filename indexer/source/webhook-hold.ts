// Hint intake (verified mode): a delivery's signatures are held durably as pending hints — together with its dead
// letters and its event record, in one transaction, before anything is checked — unless the provider's bucket would
// then hold more than its cap (429, nothing stored). Then the delivery's own open hints are checked against the chain
// (webhook-verifier.ts) for at most the inline deadline; what is still open is left to the background loop.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { WEBHOOK_CODES } from '../../common/errors/codes';
import { HttpError } from '../../common/errors/http';
import { failpoint } from '../../common/failpoint';
import { withTransaction } from '../../db/sql';
import type { SourceMetrics } from './ports';
import { HINTS_RETRY_AFTER_S } from './webhook-errors';
import type { WebhookMetrics } from './webhook-metrics';
import type { ItemRefusal } from './webhook-plan';
import { deadLetterRows, Delivery, eventRecord } from './webhook-records';
import { createWebhookStore, NewHint } from './webhook-store';
import type { ChainVerifier, CheckSummary } from './webhook-verifier';

export const DEFAULT_INLINE_CHECK_MS = 2_000;

export interface HoldDeps {
  db: Pool;
  cluster: string;
  verifier: ChainVerifier;
  /** The configured provider names (their buckets' caps are counted apart from `unknown`'s). */
  configured: readonly string[];
  maxPendingHints: number;
  /** How long the delivery waits for the first check of its own hints. */
  inlineCheckMs: number;
  metrics: SourceMetrics;
  webhookMetrics: WebhookMetrics;
  log?: Logger;
}

export interface HoldOutcome {
  /** Another delivery of the same event recorded it first. */
  duplicate: boolean;
  /** Hints of this delivery the chain confirmed (now or before). */
  credited: number;
  /** Hints still open (incl. hints another request is checking). */
  pending: number;
  /** Hints the chain refuted (now or before). */
  dropped: number;
  /** The inline check's own counts. */
  sum: CheckSummary;
}

/** Holds the hints (429 past the cap), checks the open ones inline, counts and logs the outcome. */
export async function holdAndCheck(
  deps: HoldDeps,
  d: Delivery,
  hints: readonly NewHint[],
  refused: readonly ItemRefusal[],
): Promise<HoldOutcome> {
  const { held, duplicate } = await withTransaction(deps.db, async (c) => {
    const s = createWebhookStore(c);
    const signatures = hints.map((h) => h.signature);
    const room = await s.hintCapacity(deps.cluster, d.bucket, deps.configured, signatures, deps.maxPendingHints);
    if (room.pending + room.fresh > deps.maxPendingHints) {
      deps.metrics.countWebhook(d.bucket, 'over_capacity');
      deps.webhookMetrics.countOverCapacity(d.bucket);
      throw new HttpError(
        429,
        WEBHOOK_CODES.HINTS_OVER_CAPACITY,
        `provider ${d.bucket} holds ${room.pending} signatures waiting for the chain; ${room.fresh} more would pass its cap of ${deps.maxPendingHints}: retry after ${HINTS_RETRY_AFTER_S} s (nothing was stored)`,
      );
    }
    const held = await s.holdHints(deps.cluster, d.provider, d.eventId, [...hints], deps.verifier.maxAgeMs);
    await s.deadLetter(deadLetterRows(d, refused));
    const record = eventRecord(d, refused.length, 0, 0);
    return { held, duplicate: record !== null && !(await s.recordEvent(record)) };
  });
  if (refused.length > 0)
    deps.log?.warn({ provider: d.provider, eventId: d.eventId, bad: refused }, 'webhook items dead-lettered');
  failpoint('webhook.after_hints_stored');
  const open = held.filter((h) => h.state === 'pending').map((h) => h.id);
  const sum = await deps.verifier.check(open, AbortSignal.timeout(deps.inlineCheckMs));
  const outcome: HoldOutcome = {
    duplicate,
    pending: open.length - sum.credited - sum.dropped,
    credited: held.filter((h) => h.state === 'credited').length + sum.credited,
    dropped: held.filter((h) => h.state === 'dropped').length + sum.dropped,
    sum,
  };
  const result = duplicate ? 'duplicate' : outcome.pending > 0 ? 'pending' : refused.length > 0 ? 'partial' : 'applied';
  deps.metrics.countWebhook(d.bucket, result);
  deps.log?.info(
    {
      provider: d.provider,
      eventId: d.eventId,
      items: d.items,
      signatures: hints.length,
      credited: outcome.credited,
      pending: outcome.pending,
      dropped: outcome.dropped,
      inserted: sum.inserted,
      deadLettered: refused.length,
    },
    'webhook delivery held and checked against the chain',
  );
  return outcome;
}
