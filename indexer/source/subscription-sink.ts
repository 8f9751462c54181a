// What the subscription sources (Yellowstone gRPC, websocket logsSubscribe) share once a transaction has been
// observed: decoding it or refusing it (a refusal credits nothing; the scanner reads the same transaction from its
// block), keeping confirmed receipts as provisional rows, and applying final receipts through the ledger, with the
// source's checkpoint in the same transaction, its provisional rows settled as the checkpoint passes them, and the
// per-source counters.
import type { Logger } from 'pino';
import { backoffDelay } from '../../common/backoff';
import { sleep } from '../../common/sleep';
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';
import type { Receipt } from '../decode/receipt';
import type { ReceiptSource } from '../ledger/types';
import { LedgerPort, NO_METRICS, SourceMetrics } from './ports';

export interface ProvisionalPort {
  upsert(cluster: string, rows: Array<{ slot: number; receipt: Receipt }>): Promise<void>;
  settle(cluster: string, slot: number): Promise<{ final: number; reversed: number }>;
}

/** The counters an observing source keeps (its stats extend these). */
export interface ObservedCounts {
  receipts: number;
  inserted: number;
  duplicates: number;
  checkpoint: number | null;
}

/** The counters of a source that holds sessions (connections) and observes transactions. */
export interface SessionCounts extends ObservedCounts {
  sessions: number;
  reconnects: number;
  transactions: number;
}

export function sessionCounts(): SessionCounts {
  return { sessions: 0, reconnects: 0, transactions: 0, receipts: 0, inserted: 0, duplicates: 0, checkpoint: null };
}

export interface AppliedBatch {
  slot: number;
  receipts: number;
  inserted: number;
  duplicates: number;
}

export interface SubscriptionSinkDeps {
  ledger: LedgerPort;
  provisional?: ProvisionalPort;
  log?: Logger;
  metrics?: SourceMetrics;
  /** Called after each ledger batch (tests and the CLI's summary). */
  onApplied?: (r: AppliedBatch) => void;
}

/** What a subscription source takes besides its connection. */
export interface SubscriptionDeps extends SubscriptionSinkDeps {
  /** Addresses to watch (deposit addresses, their ATAs, reference keys), read again every refreshMs. */
  watched: () => Promise<string[]>;
}

export function createSubscriptionSink(
  deps: SubscriptionSinkDeps,
  o: { cluster: string; source: ReceiptSource; commitment: 'confirmed' | 'finalized' },
  stats: ObservedCounts,
) {
  const metrics = deps.metrics ?? NO_METRICS;
  const keepsProvisional = o.commitment === 'confirmed' && deps.provisional !== undefined;
  return {
    /**
     * `decode()`'s receipts (counted in `counts`), or none when the decoder refuses the transaction (logged,
     * balance mismatches counted).
     */
    decode(
      decode: () => Receipt[],
      at: { signature: string; slot: number },
      counts: Pick<ObservedCounts, 'receipts'> = stats,
    ): Receipt[] {
      try {
        const receipts = decode();
        counts.receipts += receipts.length;
        return receipts;
      } catch (e) {
        if (e instanceof OncepayError && e.code === DECODE_CODES.BALANCE_MISMATCH)
          metrics.countBalanceMismatch(o.cluster, o.source);
        deps.log?.error({ ...at, err: (e as Error).message }, 'observed transaction refused, nothing credited');
        return [];
      }
    },

    /** Confirmed receipts kept as provisional rows (only with --commitment confirmed); never credited. */
    async provisional(rows: Array<{ slot: number; receipt: Receipt }>): Promise<void> {
      if (!keepsProvisional || rows.length === 0) return;
      await deps.provisional!.upsert(o.cluster, rows);
      // Seen only after the checkpoint passed its slot (a late notification): the ledger already decides it, so it
      // settles now rather than at the next checkpoint.
      const passed = stats.checkpoint;
      if (passed !== null && rows.some((r) => r.slot <= passed)) await deps.provisional!.settle(o.cluster, passed);
    },

    /**
     * Final receipts through the ledger, and the checkpoint to `checkpoint` in the same transaction when given
     * (then the provisional rows at or below it are settled). `slot` names the batch for onApplied.
     */
    async apply(receipts: Receipt[], at: { slot: number; checkpoint?: number }): Promise<void> {
      const applied = await deps.ledger.applyBatch({
        cluster: o.cluster,
        source: o.source,
        receipts,
        ...(at.checkpoint === undefined ? {} : { checkpoint: { slot: at.checkpoint } }),
      });
      stats.inserted += applied.inserted;
      stats.duplicates += applied.duplicates;
      if (applied.rejected?.length) deps.log?.warn({ rejected: applied.rejected }, 'ledger refused malformed receipts');
      if (at.checkpoint !== undefined) {
        // Settled before the checkpoint is shown: whoever sees it may rely on the provisional rows below it.
        if (keepsProvisional) await deps.provisional!.settle(o.cluster, at.checkpoint);
        stats.checkpoint = Math.max(stats.checkpoint ?? -1, at.checkpoint);
      }
      deps.onApplied?.({
        slot: at.slot,
        receipts: receipts.length,
        inserted: applied.inserted,
        duplicates: applied.duplicates,
      });
    },
  };
}

/** An error's message with its causes (clients nest the transport's status there). */
export function causes(e: unknown): string {
  const parts: string[] = [];
  for (let x = e; x instanceof Error && parts.length < 5; x = x.cause) parts.push(x.message);
  return parts.join(' / ');
}

/**
 * Calls `stop` when `signal` aborts — or at once when it has aborted already, since an abort event fired before
 * anyone listened is never seen again (a SIGTERM that lands while a session connects). Returns the unsubscribe.
 */
export function onStop(signal: AbortSignal, stop: () => void): () => void {
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  return () => signal.removeEventListener('abort', stop);
}

/**
 * Run `session` again and again until `signal` aborts: a session returns when the signal aborts and throws when its
 * connection fails; the next one starts after a capped exponential backoff with jitter (reset by `healthy`).
 */
export async function runSessions(
  signal: AbortSignal,
  session: (signal: AbortSignal, healthy: () => void) => Promise<void>,
  o: {
    backoff: { baseMs: number; capMs: number };
    /** oncepay_rpc_errors_total{kind}: one per failed session. */
    kind: string;
    stats: { reconnects: number };
    log?: Logger;
    metrics?: SourceMetrics;
  },
): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    try {
      await session(signal, () => (failures = 0));
    } catch (e) {
      if (signal.aborted) break;
      failures++;
      o.stats.reconnects++;
      (o.metrics ?? NO_METRICS).countRpcError(o.kind);
      const delay = backoffDelay(failures, o.backoff, Math.random());
      o.log?.warn({ err: causes(e), failures, retryInMs: delay }, `${o.kind} failed; reconnecting from the checkpoint`);
      try {
        await sleep(delay, signal);
      } catch {
        break;
      }
    }
  }
}
