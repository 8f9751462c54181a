// The ledger: one database transaction per batch. Receipts go in ON CONFLICT DO NOTHING, and only the rows this
// transaction actually inserted are matched, credited, raised as exceptions and fulfilled, all before COMMIT, so
// a redelivered, replayed or concurrent batch can never credit the same transfer twice. This file composes the
// units: staged.ts (the batch plan), prediction.ts (probe or not, COPY or not), batch-transaction.ts (one batch in
// its transaction: probe.ts, copy-path.ts, insert-path.ts), pipeline.ts (batches in order), with deadlock retries.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { failpoint } from '../../common/failpoint';
import { exec, one, withTransaction } from '../../db/sql';
import { logger } from '../../common/log';
import type { IndexerMetrics } from '../metrics';
import { readReport } from '../report';
import { applyInTransaction, type BatchOptions } from './batch-transaction';
import { createInvoices, type Invoices } from './invoices';
import { type BatchPipeline, createPipeline } from './pipeline';
import { createPrediction } from './prediction';
import * as q from './queries';
import { prepareEarly, prepareLate, type Staged, stage } from './staged';
import type { ApplyBatchInput, ApplyBatchResult, LedgerReport, ReceiptSource } from './types';
import { assertCluster, assertSource, slotText } from './validate';

export interface LedgerDeps {
  db: Pool;
  log?: Logger;
  metrics?: IndexerMetrics;
}

export type { BatchPipeline } from './pipeline';
export { applyInOrder } from './pipeline';

export interface Ledger extends Invoices {
  applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult>;
  /**
   * Batches of one stream applied in the order given, one transaction each, settled in that order. While one waits
   * on PostgreSQL, node prepares the next (its invoice lock, validation, chain order); once its COMMIT is sent, the
   * next begins on a second connection with its invoice lock alone, and runs the rest only after that commit
   * succeeded. When a batch fails, it and every batch given after it reject (PIPELINE_BROKEN), unapplied: a
   * checkpoint never passes a batch that did not commit. A caller keeps two in flight (give the next, then await
   * the one before).
   */
  pipeline(): BatchPipeline;
  getCheckpoint(cluster: string, source: ReceiptSource): Promise<bigint | null>;
  setCheckpoint(cluster: string, source: ReceiptSource, slot: bigint | number): Promise<bigint>;
  /** The ledger's totals (indexer/report.ts). */
  report(): Promise<LedgerReport>;
}

// Deadlocks should not happen (fixed lock order), but a rolled-back batch is always safe to run again.
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_TRIES = 5;

/** In a pipeline: the batch given after this one, its gate, and what runs once its COMMIT is on its way. */
interface InPipeline {
  next: () => Staged | undefined;
  gate: Promise<void>;
  onCommitting: () => void;
}

export function createLedger(deps: LedgerDeps): Ledger {
  const { db, metrics } = deps;
  const log = deps.log ?? logger('ledger');
  const prediction = createPrediction();

  /** One batch, in one transaction (tried again on a deadlock); in a pipeline, as `p` says (pipeline.ts RunBatch). */
  async function run(s: Staged, p?: InPipeline): Promise<ApplyBatchResult> {
    const options: BatchOptions = {
      probe: prediction.probes(s.path),
      copy: prediction.copies(s.path),
      aside: p && (() => prepareEarly(p.next(), prediction, log)),
      gate: p?.gate,
      log,
    };
    const whileCommitting =
      p &&
      (() => {
        p.onCommitting();
        prepareLate(p.next(), prediction);
      });
    for (let tries = 1; ; tries++) {
      try {
        const { result, distinct } = await withTransaction(
          db,
          (c) => applyInTransaction(c, s, options),
          'BEGIN',
          whileCommitting,
        );
        prediction.record(s.path, distinct, result.inserted);
        failpoint('ledger.after_commit');
        result.rejected = s.rejected!;
        if (metrics) {
          metrics.receiptsTotal.inc({ cluster: s.cluster, source: s.source }, result.inserted);
          metrics.duplicatesTotal.inc({ cluster: s.cluster, source: s.source }, result.duplicates);
          for (const e of result.exceptions) metrics.exceptionsTotal.inc({ kind: e.kind });
        }
        return result;
      } catch (e) {
        // Rolled back by withTransaction.
        const code = (e as { code?: string }).code;
        if (code && RETRYABLE.has(code) && tries < MAX_TRIES) {
          log.warn({ code, tries }, 'ledger batch rolled back, retrying');
          continue;
        }
        throw e;
      }
    }
  }

  function applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult> {
    try {
      return run(stage(input));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async function getCheckpoint(cluster: string, source: ReceiptSource): Promise<bigint | null> {
    assertSource(source);
    const row = await one<{ slot: string }>(db, q.getCheckpoint(cluster, source));
    return row ? BigInt(row.slot) : null;
  }

  async function setCheckpoint(cluster: string, source: ReceiptSource, slot: bigint | number): Promise<bigint> {
    assertCluster(cluster);
    assertSource(source);
    await exec(db, q.advanceCheckpoint(cluster, source, slotText(slot)));
    return (await getCheckpoint(cluster, source))!;
  }

  return {
    applyBatch,
    pipeline: () => createPipeline(stage, (s, next, gate, onCommitting) => run(s, { next, gate, onCommitting })),
    getCheckpoint,
    setCheckpoint,
    ...createInvoices(db),
    report: () => readReport(db),
  };
}
