// What one check of webhook hints did (pure, no I/O): the counters a check returns, one hint's outcome as a waiting
// delivery sees it, and how a check's per-hint results split into the credited/dropped, the rescheduled and the expired.
import type { ClaimedHint } from './webhook-store';

export interface CheckSummary {
  checked: number;
  credited: number;
  dropped: number;
  pending: number;
  receipts: number;
  inserted: number;
  duplicates: number;
}

export const EMPTY_SUMMARY: CheckSummary = {
  checked: 0,
  credited: 0,
  dropped: 0,
  pending: 0,
  receipts: 0,
  inserted: 0,
  duplicates: 0,
};

/** A hint to schedule again. */
export interface HintRecheck {
  id: string;
  delayMs: number;
  lastError: string;
}

/** A hint to delete: it expired unconfirmed. */
export interface HintExpired {
  expired: ClaimedHint;
  reason: 'not_found' | 'rpc_error';
}

/** A hint to schedule again, or to delete (expired unconfirmed): written for the whole check at its end. */
export interface HintLater {
  later: HintRecheck | HintExpired;
}

/** One hint's result in a check: settled now (credited, dropped), or left for the batched writes at its end. */
export type HintResult = Partial<CheckSummary> | HintLater;

/** Adds `r` into `sum`. */
export function addSummary(sum: CheckSummary, r: Partial<CheckSummary>): void {
  for (const k of Object.keys(r) as Array<keyof CheckSummary>) sum[k] += r[k] ?? 0;
}

/** `r` as one hint's outcome for a delivery waiting on it (rescheduled: pending; expired: dropped). */
export function waiterOutcome(r: HintResult): Partial<CheckSummary> {
  return 'later' in r ? ('id' in r.later ? { pending: 1 } : { dropped: 1 }) : r;
}

/** A check's results split: those settled now, the hints to schedule again and those to delete. */
export function splitResults(results: readonly HintResult[]): {
  settled: Array<Partial<CheckSummary>>;
  recheck: HintRecheck[];
  expired: HintExpired[];
} {
  const settled: Array<Partial<CheckSummary>> = [];
  const recheck: HintRecheck[] = [];
  const expired: HintExpired[] = [];
  for (const r of results) {
    if (!('later' in r)) settled.push(r);
    else if ('id' in r.later) recheck.push(r.later);
    else expired.push(r.later);
  }
  return { settled, recheck, expired };
}
