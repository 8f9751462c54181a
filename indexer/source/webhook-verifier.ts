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
// (queries.ts leaseHints). The decisions are pure (webhook-hint-plan.ts); one check is webhook-check.ts, settling one
// hint webhook-hint-settle.ts; this holds the session, the leases and the loop.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { failpoint } from '../../common/failpoint';
import { ignoreAbort, sleep } from '../../common/sleep';
import { type HeldConnection, holdConnection } from '../../db/held-connection';
import { decodeTransaction } from '../decode';
import type { Receipt } from '../decode/receipt';
import type { RpcClient } from '../rpc';
import type { LedgerPort } from './ports';
import { type CheckContext, checkLeased } from './webhook-check';
import { addSummary, type CheckSummary, EMPTY_SUMMARY } from './webhook-check-summary';
import { DEFAULT_RECHECK, RecheckPolicy } from './webhook-hint-plan';
import { NO_WEBHOOK_METRICS, WebhookMetrics } from './webhook-metrics';
import { createWebhookStore } from './webhook-store';

export type { CheckSummary };

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

/** What the checks of one verifier share: their context, the held session, the lease terms and the hints in flight. */
interface VerifierState {
  ctx: CheckContext;
  session: HeldConnection;
  leaseMs: number;
  known: string[];
  /**
   * The hints a check of this verifier holds now, each with its outcome once that check ends: a delivery's own check
   * waits for those of its hints another check leased first (a background round takes every due hint, a fresh one
   * too; or a concurrent copy of the delivery), instead of answering 202 for a check already under way. At most the
   * leased hints, each until its check ends.
   */
  inFlight: Map<string, Promise<Partial<CheckSummary>>>;
}

/** The check context of these options, its defaults filled in, writing through `session`. */
function checkContext(opts: ChainVerifierOptions, session: HeldConnection): CheckContext {
  return {
    rpc: opts.rpc,
    ledger: opts.ledger,
    cluster: opts.cluster,
    decode: opts.decode ?? ((tx: unknown, cluster: string) => decodeTransaction(tx, { cluster })),
    policy: opts.recheck ?? DEFAULT_RECHECK,
    random: opts.random ?? Math.random,
    metrics: opts.metrics ?? NO_WEBHOOK_METRICS,
    log: opts.log,
    concurrency: Math.max(1, opts.concurrency ?? DEFAULT_HINT_CONCURRENCY),
    // Applying and dead-lettering go through the pool (the ledger's own transactions).
    store: createWebhookStore(opts.db),
    // Leases and the writes that settle them go through one connection, held while any check is in progress: its
    // session is the leases' holder, and every lease is settled or released before the check ends.
    onSession: (use) => session.run((c) => use(createWebhookStore(c))),
  };
}

/** Lease (on the verifier's session, held until the check ends) and check; also which hints it leased. */
function leaseAndCheck(
  st: VerifierState,
  lease: { ids?: string[]; limit: number },
  signal?: AbortSignal,
): Promise<{ sum: CheckSummary; leased: Set<string> }> {
  const { ctx, inFlight } = st;
  return st.session.hold(async () => {
    const hints = await ctx.onSession((s) =>
      s.leaseHints(ctx.cluster, { ...lease, leaseMs: st.leaseMs, known: st.known }),
    );
    const leased = new Set(hints.map((h) => h.id));
    ctx.metrics.queue.claimed(hints.length);
    if (hints.length === 0) return { sum: { ...EMPTY_SUMMARY }, leased };
    const outcomes = new Map<string, Partial<CheckSummary>>();
    const checking = (async () => {
      failpoint('webhook.after_hints_leased');
      return checkLeased(ctx, hints, signal, outcomes);
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

/**
 * How a delivery's hints that its own check did not lease ended, added into `sum`: another check of this process has
 * it (its outcome as soon as that check ends, within the signal), or a check has settled it already (its state), or
 * another process is checking it (still pending). Only how each ended counts here: the receipts belong to the check
 * that applied them.
 */
async function addOthers(
  st: VerifierState,
  sum: CheckSummary,
  others: string[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const settledBefore = others.filter((id) => !st.inFlight.has(id));
  const theirs = others.flatMap((id) => st.inFlight.get(id) ?? []);
  for (const r of (await unlessAborted(Promise.all(theirs), signal)) ?? [])
    addSummary(sum, { credited: r.credited ?? 0, dropped: r.dropped ?? 0 });
  const states = await st.ctx.store.statesById(settledBefore);
  for (const id of settledBefore) {
    const state = states.get(id) ?? 'dropped'; // deleted: expired unconfirmed
    if (state !== 'pending') addSummary(sum, state === 'credited' ? { credited: 1 } : { dropped: 1 });
  }
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

export function createChainVerifier(opts: ChainVerifierOptions) {
  const known = [...(opts.providers ?? [])];
  const roundSize = opts.roundSize ?? (opts.maxPendingHints ?? DEFAULT_MAX_PENDING_HINTS) * (known.length + 1);
  const retentionMs = opts.retentionMs ?? DEFAULT_HINT_RETENTION_MS;
  const session = holdConnection(opts.db);
  const st: VerifierState = {
    ctx: checkContext(opts, session),
    session,
    leaseMs: opts.leaseMs ?? 60_000,
    known,
    inFlight: new Map(),
  };
  const { ctx } = st;

  async function refreshPending(): Promise<number> {
    const n = await ctx.store.countPending(opts.cluster);
    ctx.metrics.setPending(n);
    return n;
  }

  let lastPrune = 0;
  /** Delete settled hints past the retention, at most once a minute. */
  async function prune(): Promise<number> {
    const now = Date.now();
    if (now - lastPrune < PRUNE_EVERY_MS) return 0;
    lastPrune = now;
    return ctx.store.pruneSettled(opts.cluster, retentionMs, PRUNE_LIMIT);
  }

  return {
    maxAgeMs: opts.maxAgeMs ?? DEFAULT_HINT_MAX_AGE_MS,
    /** Check these hints now (a delivery's own, right after they were stored). */
    async check(ids: string[], signal?: AbortSignal): Promise<CheckSummary> {
      if (ids.length === 0) return { ...EMPTY_SUMMARY };
      if (signal?.aborted) return { ...EMPTY_SUMMARY, pending: ids.length }; // no time to check: the background loop will
      const { sum, leased } = await leaseAndCheck(st, { ids, limit: ids.length }, signal);
      await addOthers(
        st,
        sum,
        ids.filter((id) => !leased.has(id)),
        signal,
      );
      await refreshPending();
      return sum;
    },
    /** One round of the background loop: check the hints that are due, then the housekeeping. */
    async checkDue(signal?: AbortSignal): Promise<CheckSummary> {
      const { sum } = await leaseAndCheck(st, { limit: roundSize }, signal);
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
          ctx.log?.error({ err: (e as Error).message }, 'webhook verifier round failed; retrying');
        }
        if (checked === 0) await sleep(pollMs, o.signal).catch(ignoreAbort);
      }
    },
  };
}

export type ChainVerifier = ReturnType<typeof createChainVerifier>;
