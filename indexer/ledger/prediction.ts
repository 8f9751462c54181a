// The probe prediction (pure): per path (cluster, source), how new its last batch was. Mostly new: the next one skips
// the probe (a second descent of the unique index per receipt, pure cost when nearly everything is new). All new, or
// probed: the candidates go in by COPY, which fails on the first identity already there (then INSERT … ON CONFLICT
// runs instead). Only a prediction: either way the unique constraint decides what is new, and a wrong guess costs
// time, never a credit.
import type { ReceiptSource } from './types';

/** What the last batch (of PREDICT_MIN receipts or more) of a path was: all new, mostly new, or mostly known. */
export type PathHistory = 'all' | 'most' | 'few';

// Batches smaller than this do not change the prediction (a few receipts say little about the stream).
export const PREDICT_MIN = 64;

/** The key of a path's history: `cluster NUL source`. */
export function pathOf(cluster: string, source: ReceiptSource): string {
  return `${cluster}\u0000${source}`;
}

/** How new a batch of `distinct` receipts was, `inserted` of them new; undefined when it is too small to say. */
export function historyOf(distinct: number, inserted: number): PathHistory | undefined {
  if (distinct < PREDICT_MIN) return undefined;
  return inserted === distinct ? 'all' : inserted * 2 > distinct ? 'most' : 'few';
}

export interface Prediction {
  /** Whether the next batch of `path` probes the ledger for its known receipts first (a path never seen does). */
  probes(path: string): boolean;
  /** Whether its candidates are expected to be new, so go in by COPY (probed, or the last batch was all new). */
  copies(path: string): boolean;
  /** A batch of `path` committed: `distinct` receipts after repeats were dropped, `inserted` of them new. */
  record(path: string, distinct: number, inserted: number): void;
}

export function createPrediction(): Prediction {
  const history = new Map<string, PathHistory>();
  const probes = (path: string): boolean => {
    const last = history.get(path);
    return last !== 'all' && last !== 'most';
  };
  return {
    probes,
    copies: (path) => probes(path) || history.get(path) === 'all',
    record(path, distinct, inserted) {
      const h = historyOf(distinct, inserted);
      if (h !== undefined) history.set(path, h);
    },
  };
}
