// The chain verifier: a webhook delivery names signatures; this checks them against the chain — in batches, so a flood
// of made-up signatures cannot hold a real payment back — and applies what the chain confirms through the ledger.
// One check of a set of hints:
//   1. getSignatureStatuses (searchTransactionHistory), 256 signatures a call, `concurrency` calls at once: unknown
//      to the node, seen but not final, failed at finalized, or finalized without error;
//   2. getTransaction at `finalized` for the last ones only (`concurrency` at once): the chain's own transaction is
//      decoded (never the delivery's) and applied; what the decoder refuses is dropped and dead-lettered;
//   3. one statement schedules the rest again (capped exponential backoff with jitter; a transaction seen but not
//      final, after the first step only) and one deletes those that expired unconfirmed.
// The background loop leases every due hint (up to `roundSize`, by default every hint the per-provider caps allow)
// round-robin across the provider buckets, least-checked first: a round costs ⌈hints/256⌉ status calls plus one
// getTransaction per hint the chain has finalized. Leases belong to this verifier's own connection
// (db/held-connection.ts): when the process dies or the connection breaks, PostgreSQL frees them at once
// (queries.ts leaseHints). The decisions are pure (webhook-hint-plan.ts); this is the I/O shell around them.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { isOncepayError, OncepayError, SOURCE_CODES } from '../../common/errors';
import { failpoint } from '../../common/failpoint';
import { holdConnection } from '../../db/held-connection';
import { decodeTransaction } from '../decode';
import { WEBHOOK_CODES } from '../../common/errors/codes';
import type { Receipt } from '../decode/receipt';
import { ignoreAbort, sleep } from '../../common/sleep';
import { MAX_SIGNATURES_PER_STATUS_CALL, type RpcClient, type SignatureStatus } from '../rpc';
import type { LedgerPort } from './ports';
import {
  ChainAnswer,
  classifyChainAnswer,
  classifyStatus,
  claimDisagreement,
  DEFAULT_RECHECK,
  HintStep,
  nextHintStep,
  RecheckPolicy,
} from './webhook-hint-plan';
import { NO_WEBHOOK_METRICS, WebhookMetrics } from './webhook-metrics';
import { ClaimedHint, createWebhookStore } from './webhook-store';

export const DEFAULT_HINT_MAX_AGE_MS = 10 * 60_000;
/** Pending hints one provider bucket may hold (a delivery past it is refused 429: webhook.ts). */
export const DEFAULT_MAX_PENDING_HINTS = 1000;
/** Status and transaction calls of one check in flight at once. */
export const DEFAULT_HINT_CONCURRENCY = 4;
/** Settled hints (credited, refuted) are deleted this long after settling. */
export const DEFAULT_HINT_RETENTION_MS = 7 * 24 * 3600_000;
/** The housekeeping (settled hints past the retention) runs at most this often, deleting this many a statement. */
const PRUNE_EVERY_MS = 60_000;
const PRUNE_LIMIT = 1000;

export interface ChainVerifierOptions {
  db: Pool;
  rpc: Pick<RpcClient, 'getTransaction' | 'getSignatureStatuses'>;
  ledger: Pick<LedgerPort, 'applyBatch'>;
  cluster: string;
  /** A hint the chain has not confirmed by then is deleted (counted as dropped; default 10 minutes). */
  maxAgeMs?: number;
  recheck?: RecheckPolicy;
  /** How long a check holds a hint against other verifiers while this verifier's session lives (default 60 s). */
  leaseMs?: number;
  /** The provider names with a bucket of their own (fairness, caps); every other name shares `unknown`. */
  providers?: readonly string[];
  /** Pending hints per provider bucket (webhook.ts refuses a delivery past it); sizes the default round. */
  maxPendingHints?: number;
  /** Hints one background round leases at most (default maxPendingHints × (providers + 1): every due hint). */
  roundSize?: number;
  /** Status and transaction calls in flight at once (default 4). */
  concurrency?: number;
  /** Settled hints are deleted this long after settling (default 7 days). */
  retentionMs?: number;
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

function add(sum: CheckSummary, r: Partial<CheckSummary>): void {
  for (const k of Object.keys(r) as Array<keyof CheckSummary>) sum[k] += r[k] ?? 0;
}

/** JSON of a chain answer for a dead letter (u64 values the exact reader gave as bigint become decimal strings). */
function chainBytes(tx: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(tx, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    'utf8',
  );
}

/** `f` over `items`, at most `limit` at a time; results in order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await f(items[i]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

export function createChainVerifier(opts: ChainVerifierOptions) {
  const policy = opts.recheck ?? DEFAULT_RECHECK;
  const leaseMs = opts.leaseMs ?? 60_000;
  const metrics = opts.metrics ?? NO_WEBHOOK_METRICS;
  const random = opts.random ?? Math.random;
  const decode = opts.decode ?? ((tx: unknown, cluster: string) => decodeTransaction(tx, { cluster }));
  const log = opts.log;
  const known = [...(opts.providers ?? [])];
  const concurrency = Math.max(1, opts.concurrency ?? DEFAULT_HINT_CONCURRENCY);
  const roundSize = opts.roundSize ?? (opts.maxPendingHints ?? DEFAULT_MAX_PENDING_HINTS) * (known.length + 1);
  const retentionMs = opts.retentionMs ?? DEFAULT_HINT_RETENTION_MS;
  // Leases and the writes that settle them go through one connection, held while any check is in progress: its
  // session is the leases' holder, and every lease is settled or released before the check ends.
  const session = holdConnection(opts.db);
  const onSession = <T>(use: (s: ReturnType<typeof createWebhookStore>) => Promise<T>) =>
    session.run((c) => use(createWebhookStore(c)));
  // Applying and dead-lettering go through the pool (the ledger's own transactions).
  const store = createWebhookStore(opts.db);
  // The hints a check of this verifier holds now, each with its outcome once that check ends: a delivery's own check
  // waits for those of its hints another check leased first (a background round takes every due hint, a fresh one
  // too; or a concurrent copy of the delivery), instead of answering 202 for a check already under way. At most the
  // leased hints, each until its check ends.
  const inFlight = new Map<string, Promise<Partial<CheckSummary>>>();

  /** Step 2 for one hint the chain has finalized: its transaction, then credit or drop. */
  async function fetchAndSettle(h: ClaimedHint, signal?: AbortSignal): Promise<Partial<CheckSummary> | HintLater> {
    let tx: Record<string, unknown> | null = null;
    let answer: ChainAnswer;
    try {
      tx = await opts.rpc.getTransaction(h.signature, 'finalized', { signal });
      answer = classifyChainAnswer(tx, (t) => decode(t, opts.cluster));
    } catch (e) {
      if (signal?.aborted || !isOncepayError(e)) throw e;
      answer = { kind: 'rpc_error', message: e.message };
    }
    const step = nextHintStep(h, answer, policy, random());
    if (step.action !== 'credit') return settleWithout(h, step, tx);
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
    await onSession((s) =>
      s.settleCredited(h.id, { slot: step.receipts[0]?.slot ?? null, receipts: step.receipts.length, inserted }),
    );
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
    return { credited: 1, receipts: step.receipts.length, inserted, duplicates };
  }

  /** A hint to schedule again, or to delete (expired unconfirmed): written for the whole check at its end. */
  interface HintLater {
    later:
      { id: string; delayMs: number; lastError: string } | { expired: ClaimedHint; reason: 'not_found' | 'rpc_error' };
  }

  /** A step that credits nothing: drop it now (refuted), or leave it for the batched writes at the end. */
  async function settleWithout(
    h: ClaimedHint,
    step: Exclude<HintStep, { action: 'credit' }>,
    tx: unknown,
  ): Promise<Partial<CheckSummary> | HintLater> {
    if (step.action === 'recheck') return { later: { id: h.id, delayMs: step.delayMs, lastError: step.lastError } };
    if (step.reason === 'not_found' || step.reason === 'rpc_error')
      return { later: { expired: h, reason: step.reason } };
    if (step.reason === 'balance_mismatch' || step.reason === 'malformed') {
      metrics.countVerificationFailure(step.reason);
      await store.deadLetter([
        {
          provider: h.provider,
          eventId: h.eventId,
          itemIndex: null,
          reason:
            step.reason === 'balance_mismatch'
              ? WEBHOOK_CODES.BALANCE_MISMATCH
              : WEBHOOK_CODES.CHAIN_TRANSACTION_REFUSED,
          detail: step.detail,
          rawBody: chainBytes(tx),
          origin: 'chain',
          signature: h.signature,
        },
      ]);
    }
    await onSession((s) => s.settleDropped(h.id, step.reason, step.detail));
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
      'webhook hint dropped: the chain refutes it',
    );
    return { dropped: 1 };
  }

  /** Step 1 for one chunk of at most 256 hints: what the node knows of each (an RPC failure: rpc_error for all). */
  async function lookChunk(chunk: ClaimedHint[], signal?: AbortSignal) {
    let statuses: Array<SignatureStatus | null>;
    try {
      statuses = await opts.rpc.getSignatureStatuses(
        chunk.map((h) => h.signature),
        { signal },
      );
    } catch (e) {
      if (signal?.aborted || !isOncepayError(e)) throw e;
      return chunk.map((): ReturnType<typeof classifyStatus> => ({ kind: 'rpc_error', message: e.message }));
    }
    return statuses.map(classifyStatus);
  }

  /**
   * Check leased hints (in their lease order) and settle every one of them: credited, dropped, scheduled again or
   * deleted. If the check stops early (the signal, the database gone), the hints not settled yet go back at once
   * (best effort: where the database is still away, their holder session is gone with it and frees them anyway).
   */
  async function checkLeased(
    hints: ClaimedHint[],
    signal: AbortSignal | undefined,
    outcomes: Map<string, Partial<CheckSummary>>,
  ): Promise<CheckSummary> {
    const sum = { ...EMPTY, checked: hints.length };
    const settled = new Set<string>();
    /** `r` as one hint's outcome for a delivery waiting on it (rescheduled: pending; expired: dropped). */
    const outcome = (h: ClaimedHint, r: Partial<CheckSummary> | HintLater) => {
      outcomes.set(h.id, 'later' in r ? ('id' in r.later ? { pending: 1 } : { dropped: 1 }) : r);
      return r;
    };
    try {
      const chunks: ClaimedHint[][] = [];
      for (let i = 0; i < hints.length; i += MAX_SIGNATURES_PER_STATUS_CALL)
        chunks.push(hints.slice(i, i + MAX_SIGNATURES_PER_STATUS_CALL));
      const looks = (await mapLimit(chunks, concurrency, (c) => lookChunk(c, signal))).flat();
      const toFetch: ClaimedHint[] = [];
      const results: Array<Partial<CheckSummary> | HintLater> = [];
      for (let i = 0; i < hints.length; i++) {
        const look = looks[i];
        if (look.kind === 'fetch') {
          toFetch.push(hints[i]);
          continue;
        }
        const step = nextHintStep(hints[i], look, policy, random());
        if (step.action === 'credit')
          throw new OncepayError(SOURCE_CODES.HINT_STEP_INVALID, 'a status alone never credits'); // only a transaction does
        results.push(outcome(hints[i], await settleWithout(hints[i], step, null)));
        settled.add(hints[i].id);
      }
      // Credits first: a real payment is applied before the flood around it is scheduled again.
      for (const r of await mapLimit(toFetch, concurrency, async (h) => {
        const out = outcome(h, await fetchAndSettle(h, signal));
        settled.add(h.id);
        return out;
      }))
        results.push(r);
      const later = results.filter((r): r is HintLater => 'later' in r).map((r) => r.later);
      const recheck = later.filter((x): x is { id: string; delayMs: number; lastError: string } => 'id' in x);
      const expired = later.filter(
        (x): x is { expired: ClaimedHint; reason: 'not_found' | 'rpc_error' } => 'expired' in x,
      );
      await onSession(async (s) => {
        await s.recheckLater(recheck);
        await s.deleteExpired(expired.map((x) => x.expired.id));
      });
      for (const x of expired) metrics.countDropped(x.reason);
      metrics.queue.settled('done', results.length - later.length);
      metrics.queue.settled('retry', recheck.length);
      metrics.queue.settled('dead', expired.length);
      if (expired.length > 0) {
        // One line per check, not per hint: a flood of made-up signatures does not flood the log.
        log?.warn(
          {
            deleted: expired.length,
            signatures: expired.slice(0, 5).map((x) => x.expired.signature),
            providers: [...new Set(expired.map((x) => x.expired.provider))].slice(0, 5),
          },
          'webhook hints deleted: the chain never confirmed them before they expired',
        );
      }
      for (const r of results) if (!('later' in r)) add(sum, r);
      sum.pending += recheck.length;
      sum.dropped += expired.length;
      return sum;
    } catch (e) {
      const rest = hints.filter((h) => !settled.has(h.id)).map((h) => h.id);
      metrics.queue.settled('released', rest.length);
      await onSession((s) => s.release(rest)).catch((err: Error) =>
        log?.warn(
          { hints: rest.length, err: err.message },
          'webhook hint leases not released; their session frees them',
        ),
      );
      // Interrupted (a delivery's deadline, shutdown): what was not settled stays pending for the background loop.
      if (signal?.aborted) return { ...sum, pending: sum.pending + rest.length };
      throw e;
    }
  }

  /** Lease (on the verifier's session, held until the check ends) and check; also which hints it leased. */
  function leaseAndCheck(
    lease: { ids?: string[]; limit: number },
    signal?: AbortSignal,
  ): Promise<{ sum: CheckSummary; leased: Set<string> }> {
    return session.hold(async () => {
      const hints = await onSession((s) => s.leaseHints(opts.cluster, { ...lease, leaseMs, known }));
      const leased = new Set(hints.map((h) => h.id));
      metrics.queue.claimed(hints.length);
      if (hints.length === 0) return { sum: { ...EMPTY }, leased };
      const outcomes = new Map<string, Partial<CheckSummary>>();
      const checking = (async () => {
        failpoint('webhook.after_hints_leased');
        return checkLeased(hints, signal, outcomes);
      })();
      const ended = checking.then(
        () => undefined,
        () => undefined,
      );
      const mine = hints.map((h) => {
        const p = ended.then(() => outcomes.get(h.id) ?? { pending: 1 });
        inFlight.set(h.id, p);
        return [h.id, p] as const;
      });
      try {
        return { sum: await checking, leased };
      } finally {
        for (const [id, p] of mine) if (inFlight.get(id) === p) inFlight.delete(id);
      }
    });
  }

  /** `p`'s value, or undefined as soon as `signal` aborts. */
  function unlessAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T | undefined> {
    if (!signal) return p;
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = () => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      void p.then((v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      });
    });
  }

  async function refreshPending(): Promise<number> {
    const n = await store.countPending(opts.cluster);
    metrics.setPending(n);
    return n;
  }

  let lastPrune = 0;
  /** Delete settled hints past the retention, at most once a minute. */
  async function prune(): Promise<number> {
    const now = Date.now();
    if (now - lastPrune < PRUNE_EVERY_MS) return 0;
    lastPrune = now;
    return store.pruneSettled(opts.cluster, retentionMs, PRUNE_LIMIT);
  }

  return {
    maxAgeMs: opts.maxAgeMs ?? DEFAULT_HINT_MAX_AGE_MS,
    /** Check these hints now (a delivery's own, right after they were stored). */
    async check(ids: string[], signal?: AbortSignal): Promise<CheckSummary> {
      if (ids.length === 0) return { ...EMPTY };
      if (signal?.aborted) return { ...EMPTY, pending: ids.length }; // no time to check: the background loop will
      const { sum, leased } = await leaseAndCheck({ ids, limit: ids.length }, signal);
      // Not leased here: another check of this process has it (its outcome as soon as that check ends, within the
      // signal), or a check has settled it already (its state), or another process is checking it (still pending).
      // Only how each ended counts here: the receipts belong to the check that applied them.
      const others = ids.filter((id) => !leased.has(id));
      const settledBefore = others.filter((id) => !inFlight.has(id));
      const theirs = others.flatMap((id) => inFlight.get(id) ?? []);
      for (const r of (await unlessAborted(Promise.all(theirs), signal)) ?? [])
        add(sum, { credited: r.credited ?? 0, dropped: r.dropped ?? 0 });
      const states = await store.statesById(settledBefore);
      for (const id of settledBefore) {
        const state = states.get(id) ?? 'dropped'; // deleted: expired unconfirmed
        if (state !== 'pending') add(sum, state === 'credited' ? { credited: 1 } : { dropped: 1 });
      }
      await refreshPending();
      return sum;
    },
    /** One round of the background loop: check the hints that are due, then the housekeeping. */
    async checkDue(signal?: AbortSignal): Promise<CheckSummary> {
      const { sum } = await leaseAndCheck({ limit: roundSize }, signal);
      await refreshPending();
      await prune();
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
        if (checked === 0) await sleep(pollMs, o.signal).catch(ignoreAbort);
      }
    },
  };
}

export type ChainVerifier = ReturnType<typeof createChainVerifier>;
