// Settling one leased webhook hint: for a hint the chain has finalized, its transaction (the chain's, never the
// delivery's) is decoded and applied through the ledger, or refused and dead-lettered; a step that credits nothing is
// a drop now (refuted) or left for the check's batched writes (rescheduled, expired). The decisions are pure
// (webhook-hint-plan.ts); this is their I/O.
import type { Logger } from 'pino';
import { isOncepayError } from '../../common/errors';
import { WEBHOOK_CODES } from '../../common/errors/codes';
import type { Receipt } from '../decode/receipt';
import type { RpcClient } from '../rpc';
import type { LedgerPort } from './ports';
import type { HintResult } from './webhook-check-summary';
import {
  ChainAnswer,
  classifyChainAnswer,
  claimDisagreement,
  HintStep,
  nextHintStep,
  RecheckPolicy,
} from './webhook-hint-plan';
import type { WebhookMetrics } from './webhook-metrics';
import type { ClaimedHint, WebhookStore } from './webhook-store';

/** What settling a hint uses: the chain, the ledger, the stores and the verifier's policy. */
export interface SettleContext {
  rpc: Pick<RpcClient, 'getTransaction' | 'getSignatureStatuses'>;
  ledger: Pick<LedgerPort, 'applyBatch'>;
  cluster: string;
  decode: (tx: unknown, cluster: string) => Receipt[];
  policy: RecheckPolicy;
  random: () => number;
  metrics: WebhookMetrics;
  log: Logger | undefined;
  /** The pool's store: applying and dead-lettering (the ledger's own transactions). */
  store: WebhookStore;
  /** The verifier's held session: the writes that settle a lease. */
  onSession<T>(use: (s: WebhookStore) => Promise<T>): Promise<T>;
}

/** JSON of a chain answer for a dead letter (u64 values the exact reader gave as bigint become decimal strings). */
function chainBytes(tx: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(tx, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    'utf8',
  );
}

/** Step 2 for one hint the chain has finalized: its transaction, then credit or drop. */
export async function fetchAndSettle(ctx: SettleContext, h: ClaimedHint, signal?: AbortSignal): Promise<HintResult> {
  let tx: Record<string, unknown> | null = null;
  let answer: ChainAnswer;
  try {
    tx = await ctx.rpc.getTransaction(h.signature, 'finalized', { signal });
    answer = classifyChainAnswer(tx, (t) => ctx.decode(t, ctx.cluster));
  } catch (e) {
    if (signal?.aborted || !isOncepayError(e)) throw e;
    answer = { kind: 'rpc_error', message: e.message };
  }
  const step = nextHintStep(h, answer, ctx.policy, ctx.random());
  if (step.action !== 'credit') return settleWithout(ctx, h, step, tx);
  // Confirmed: the chain's transaction is what gets credited. A delivery that described it otherwise is counted.
  if (h.claimed !== null) {
    const disagreement = claimDisagreement(h.claimed, step.receipts);
    if (disagreement !== null) {
      ctx.metrics.countVerificationFailure('body_mismatch');
      ctx.log?.warn(
        { signature: h.signature, provider: h.provider, eventId: h.eventId, disagreement },
        'webhook delivery disagrees with the chain; the chain wins',
      );
    }
  }
  const { inserted, duplicates } = await applyReceipts(ctx, h, step.receipts, tx);
  await ctx.onSession((s) =>
    s.settleCredited(h.id, { slot: step.receipts[0]?.slot ?? null, receipts: step.receipts.length, inserted }),
  );
  ctx.log?.info(
    {
      signature: h.signature,
      provider: h.provider,
      receipts: step.receipts.length,
      inserted,
      duplicates,
      checks: h.checks,
    },
    'webhook hint confirmed by the chain and applied',
  );
  return { credited: 1, receipts: step.receipts.length, inserted, duplicates };
}

/** The chain's receipts of a confirmed hint through the ledger; what the ledger rejects is dead-lettered. */
async function applyReceipts(
  ctx: SettleContext,
  h: ClaimedHint,
  receipts: Receipt[],
  tx: unknown,
): Promise<{ inserted: number; duplicates: number }> {
  if (receipts.length === 0) return { inserted: 0, duplicates: 0 };
  const applied = await ctx.ledger.applyBatch({ cluster: ctx.cluster, source: 'webhook', receipts });
  if ((applied.rejected ?? []).length > 0) {
    await ctx.store.deadLetter(
      applied.rejected!.map((r) => ({
        provider: h.provider,
        eventId: h.eventId,
        itemIndex: null,
        reason: WEBHOOK_CODES.RECEIPT_REJECTED,
        detail: `${r.code}: ${r.message}`,
        rawBody: chainBytes(tx),
        origin: 'chain' as const,
        signature: h.signature,
      })),
    );
  }
  return { inserted: applied.inserted, duplicates: applied.duplicates };
}

/** A step that credits nothing: drop it now (refuted), or leave it for the batched writes at the end. */
export async function settleWithout(
  ctx: SettleContext,
  h: ClaimedHint,
  step: Exclude<HintStep, { action: 'credit' }>,
  tx: unknown,
): Promise<HintResult> {
  if (step.action === 'recheck') return { later: { id: h.id, delayMs: step.delayMs, lastError: step.lastError } };
  if (step.reason === 'not_found' || step.reason === 'rpc_error') return { later: { expired: h, reason: step.reason } };
  if (step.reason === 'balance_mismatch' || step.reason === 'malformed') {
    ctx.metrics.countVerificationFailure(step.reason);
    await ctx.store.deadLetter([
      {
        provider: h.provider,
        eventId: h.eventId,
        itemIndex: null,
        reason:
          step.reason === 'balance_mismatch' ? WEBHOOK_CODES.BALANCE_MISMATCH : WEBHOOK_CODES.CHAIN_TRANSACTION_REFUSED,
        detail: step.detail,
        rawBody: chainBytes(tx),
        origin: 'chain',
        signature: h.signature,
      },
    ]);
  }
  await ctx.onSession((s) => s.settleDropped(h.id, step.reason, step.detail));
  ctx.metrics.countDropped(step.reason);
  ctx.log?.warn(
    {
      signature: h.signature,
      provider: h.provider,
      eventId: h.eventId,
      reason: step.reason,
      detail: step.detail,
      checks: h.checks,
    },
    'webhook hint dropped: the chain refutes it',
  );
  return { dropped: 1 };
}
