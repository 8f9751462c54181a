// The chain verifier: a webhook delivery names signatures; this checks each one with `getTransaction` at `finalized`
// (what the ledger credits is final: no fork can take it back) — through the same RPC client (retries, backoff,
// oncepay_rpc_errors_total) the scanner uses — decodes the chain's own transaction (never the delivery's) and applies
// it through the ledger. What the chain does not show yet stays pending and is checked again with backoff; what it
// refutes, or never shows within the hint's lifetime, is dropped with a counted reason. The decisions are pure
// (webhook-hint-plan.ts); this is the I/O shell around them.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { isOncepayError } from '../../common/errors';
import { decodeTransaction } from '../decode';
import { DECODE_CODES, WEBHOOK_CODES } from '../../common/errors/codes';
import type { Receipt } from '../decode/receipt';
import { abortableSleep, type RpcClient } from '../rpc';
import type { LedgerPort } from './ports';
import {
  ChainAnswer,
  classifyChainAnswer,
  claimDisagreement,
  DEFAULT_RECHECK,
  nextHintStep,
  RecheckPolicy,
} from './webhook-hint-plan';
import { NO_WEBHOOK_METRICS, WebhookMetrics } from './webhook-metrics';
import { ClaimedHint, createWebhookStore } from './webhook-store';

export const DEFAULT_HINT_MAX_AGE_MS = 10 * 60_000;

export interface ChainVerifierOptions {
  db: Pool;
  rpc: Pick<RpcClient, 'getTransaction'>;
  ledger: Pick<LedgerPort, 'applyBatch'>;
  cluster: string;
  /** A hint the chain has not confirmed by then is dropped (default 10 minutes). */
  maxAgeMs?: number;
  recheck?: RecheckPolicy;
  /** How long one check holds a hint against other verifiers. */
  leaseMs?: number;
  /** Hints checked per round of the background loop. */
  batchSize?: number;
  decode?: (tx: unknown, cluster: string) => Receipt[];
  log?: Logger;
  metrics?: WebhookMetrics;
  random?: () => number;
}

export interface CheckSummary {
  checked: number;
  credited: number;
  dropped: number;
  pending: number;
  receipts: number;
  inserted: number;
  duplicates: number;
}

const EMPTY: CheckSummary = {
  checked: 0,
  credited: 0,
  dropped: 0,
  pending: 0,
  receipts: 0,
  inserted: 0,
  duplicates: 0,
};

/** JSON of a chain answer for a dead letter (u64 values the exact reader gave as bigint become decimal strings). */
function chainBytes(tx: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(tx, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    'utf8',
  );
}

export function createChainVerifier(opts: ChainVerifierOptions) {
  const store = createWebhookStore(opts.db);
  const policy = opts.recheck ?? DEFAULT_RECHECK;
  const leaseMs = opts.leaseMs ?? 60_000;
  const metrics = opts.metrics ?? NO_WEBHOOK_METRICS;
  const random = opts.random ?? Math.random;
  const decode = opts.decode ?? ((tx: unknown, cluster: string) => decodeTransaction(tx, { cluster }));
  const log = opts.log;

  async function checkOne(h: ClaimedHint, signal?: AbortSignal): Promise<CheckSummary> {
    let tx: Record<string, unknown> | null = null;
    let answer: ChainAnswer;
    try {
      tx = await opts.rpc.getTransaction(h.signature, 'finalized', { signal });
      answer = classifyChainAnswer(tx, (t) => decode(t, opts.cluster));
    } catch (e) {
      if (signal?.aborted) {
        await store.release(h.id); // interrupted (a delivery's deadline, shutdown): the background loop goes on
        return { ...EMPTY, checked: 1, pending: 1 };
      }
      if (!isOncepayError(e)) throw e;
      answer = { kind: 'rpc_error', message: e.message };
    }
    const step = nextHintStep(h, answer, policy, random());
    if (step.action === 'recheck') {
      await store.recheckLater(h.id, step.delayMs, step.lastError);
      return { ...EMPTY, checked: 1, pending: 1 };
    }
    if (step.action === 'drop') {
      if (step.reason === 'balance_mismatch' || step.reason === 'malformed') {
        metrics.countVerificationFailure(step.reason);
        const code =
          answer.kind === 'refused' && answer.code === DECODE_CODES.BALANCE_MISMATCH
            ? WEBHOOK_CODES.BALANCE_MISMATCH
            : WEBHOOK_CODES.CHAIN_TRANSACTION_REFUSED;
        await store.deadLetter([
          {
            provider: h.provider,
            eventId: h.eventId,
            itemIndex: null,
            reason: code,
            detail: step.detail,
            rawBody: chainBytes(tx),
            origin: 'chain',
            signature: h.signature,
          },
        ]);
      }
      await store.settleDropped(h.id, step.reason, step.detail);
      metrics.countDropped(step.reason);
      log?.warn(
        {
          signature: h.signature,
          provider: h.provider,
          eventId: h.eventId,
          reason: step.reason,
          detail: step.detail,
          checks: h.checks,
        },
        'webhook hint dropped: the chain does not confirm it',
      );
      return { ...EMPTY, checked: 1, dropped: 1 };
    }
    // Confirmed: the chain's transaction is what gets credited. A delivery that described it otherwise is counted.
    if (h.claimed !== null) {
      const disagreement = claimDisagreement(h.claimed, step.receipts);
      if (disagreement !== null) {
        metrics.countVerificationFailure('body_mismatch');
        log?.warn(
          { signature: h.signature, provider: h.provider, eventId: h.eventId, disagreement },
          'webhook delivery disagrees with the chain; the chain wins',
        );
      }
    }
    let inserted = 0;
    let duplicates = 0;
    if (step.receipts.length > 0) {
      const applied = await opts.ledger.applyBatch({
        cluster: opts.cluster,
        source: 'webhook',
        receipts: step.receipts,
      });
      inserted = applied.inserted;
      duplicates = applied.duplicates;
      if ((applied.rejected ?? []).length > 0) {
        await store.deadLetter(
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
    }
    await store.settleCredited(h.id, {
      slot: step.receipts[0]?.slot ?? null,
      receipts: step.receipts.length,
      inserted,
    });
    log?.info(
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
    return { ...EMPTY, checked: 1, credited: 1, receipts: step.receipts.length, inserted, duplicates };
  }

  async function checkLeased(hints: ClaimedHint[], signal?: AbortSignal): Promise<CheckSummary> {
    const sum = { ...EMPTY };
    for (let i = 0; i < hints.length; i++) {
      let r: CheckSummary;
      try {
        r = await checkOne(hints[i], signal);
      } catch (e) {
        // The check failed (the database went away mid-way, most likely): this hint and the rest of the round go
        // back to the queue now, not when their lease ends (a minute of credits held back after a blip). Checking
        // one again is safe: the ledger applies a receipt once. Where the database is still away, the release
        // fails too and the lease's end gives them back, as before.
        await releaseLeases(hints.slice(i));
        throw e;
      }
      for (const k of Object.keys(sum) as Array<keyof CheckSummary>) sum[k] += r[k];
    }
    return sum;
  }

  async function releaseLeases(hints: ClaimedHint[]): Promise<void> {
    for (const h of hints) {
      try {
        await store.release(h.id);
      } catch (e) {
        log?.warn({ hint: h.id, err: (e as Error).message }, 'webhook hint lease not released; it ends on its own');
        return; // the database is away: the rest would fail the same way
      }
    }
  }

  async function refreshPending(): Promise<number> {
    const n = await store.countPending(opts.cluster);
    metrics.setPending(n);
    return n;
  }

  return {
    maxAgeMs: opts.maxAgeMs ?? DEFAULT_HINT_MAX_AGE_MS,
    /** Check these hints now (a delivery's own, right after they were stored). */
    async check(ids: string[], signal?: AbortSignal): Promise<CheckSummary> {
      if (ids.length === 0) return { ...EMPTY };
      const sum = await checkLeased(await store.leaseHints(opts.cluster, { ids, limit: ids.length, leaseMs }), signal);
      await refreshPending();
      return sum;
    },
    /** One round of the background loop: check the hints that are due. */
    async checkDue(signal?: AbortSignal): Promise<CheckSummary> {
      const sum = await checkLeased(
        await store.leaseHints(opts.cluster, { limit: opts.batchSize ?? 50, leaseMs }),
        signal,
      );
      await refreshPending();
      return sum;
    },
    refreshPending,
    /** Check due hints until `signal` aborts; a failing round is logged and retried after `pollMs`. */
    async run(o: { signal: AbortSignal; pollMs?: number }): Promise<void> {
      const pollMs = o.pollMs ?? 500;
      while (!o.signal.aborted) {
        let checked = 0;
        try {
          checked = (await this.checkDue(o.signal)).checked;
        } catch (e) {
          if (o.signal.aborted) break;
          log?.error({ err: (e as Error).message }, 'webhook verifier round failed; retrying');
        }
        if (checked === 0) await abortableSleep(pollMs, o.signal).catch(() => undefined);
      }
    },
  };
}

export type ChainVerifier = ReturnType<typeof createChainVerifier>;
