// The ledger: one database transaction per batch. Receipts go in ON CONFLICT DO NOTHING, and only the rows this
// transaction actually inserted are matched, credited, raised as exceptions and fulfilled, all before COMMIT, so
// a redelivered, replayed or concurrent batch can never credit the same transfer twice.
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { failpoint } from '../../common/failpoint';
import { exec, one, rows, withTransaction } from '../../db/sql';
import { logger } from '../../common/log';
import type { Receipt } from '../decode/receipt';
import type { IndexerMetrics } from '../metrics';
import { readReport } from '../report';
import { LEDGER_CODES } from '../../common/errors/codes';
import {
  Invoices,
  createInvoices,
  creditRows,
  lockCandidates,
  matchReceipts,
  rematchInserted,
  writeCredits,
} from './invoices';
import * as q from './queries';
import type { ApplyBatchInput, ApplyBatchResult, LedgerReport, ReceiptSource } from './types';
import {
  assertCluster,
  assertSource,
  compareReceipts,
  partitionReceipts,
  receiptKey,
  uniqueReceipts,
} from './validate';

export interface LedgerDeps {
  db: Pool;
  log?: Logger;
  metrics?: IndexerMetrics;
}

export interface Ledger extends Invoices {
  applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult>;
  getCheckpoint(cluster: string, source: ReceiptSource): Promise<bigint | null>;
  setCheckpoint(cluster: string, source: ReceiptSource, slot: bigint | number): Promise<bigint>;
  /** The ledger's totals (indexer/report.ts). */
  report(): Promise<LedgerReport>;
}

// Deadlocks should not happen (fixed lock order), but a rolled-back batch is always safe to run again.
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_TRIES = 5;

export function createLedger(deps: LedgerDeps): Ledger {
  const { db, metrics } = deps;
  const log = deps.log ?? logger('ledger');

  async function applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult> {
    assertCluster(input.cluster);
    assertSource(input.source);
    const checkpoint = input.checkpoint === undefined ? undefined : slotText(input.checkpoint.slot);
    const { good, rejected } = partitionReceipts(input.receipts, input.cluster);
    for (const r of rejected)
      log.error({ code: r.code, index: r.index, cluster: input.cluster, source: input.source }, r.message);
    const batch = uniqueReceipts(good);
    for (let tries = 1; ; tries++) {
      try {
        const result = await withTransaction(db, (c) =>
          applyInTransaction(c, input.cluster, input.source, batch, good.length, checkpoint),
        );
        failpoint('ledger.after_commit');
        result.rejected = rejected;
        if (metrics) {
          metrics.receiptsTotal.inc({ cluster: input.cluster, source: input.source }, result.inserted);
          metrics.duplicatesTotal.inc({ cluster: input.cluster, source: input.source }, result.duplicates);
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

  async function applyInTransaction(
    client: PoolClient,
    cluster: string,
    source: ReceiptSource,
    batch: Receipt[],
    delivered: number,
    checkpoint: string | undefined,
  ): Promise<ApplyBatchResult> {
    const result: ApplyBatchResult = {
      inserted: 0,
      duplicates: 0,
      credited: [],
      exceptions: [],
      fulfilled: [],
      rejected: [],
    };
    // 1. Which receipts are new (identity only: cheap for a mostly-duplicate batch).
    const unknown = batch.length === 0 ? [] : await unknownReceipts(client, cluster, batch);
    let inserted: Receipt[] = [];
    if (unknown.length > 0) {
      // 2. Lock the invoices they could pay and plan the credits, so each row goes in with its invoice id.
      //    Lock order for every batch: invoices (by id) → receipts (by identity) → counters → checkpoint.
      const chain = [...unknown].sort(compareChain);
      const invoices = await lockCandidates(client, chain);
      const { plan: planned, invoiceOf } = matchReceipts(chain, invoices);
      // 3. Insert. RETURNING lists the rows this transaction inserted: only those may be credited.
      const insertedRows = await rows<{ id: string; signature: string; ix_index: number; inner_index: number }>(
        client,
        q.insertReceipts(cluster, source, columns(unknown, invoiceOf)),
      );
      const ids = new Map(
        insertedRows.map((row) => [
          receiptKey({ signature: row.signature, ixIndex: row.ix_index, innerIndex: row.inner_index }),
          row.id,
        ]),
      );
      const idOf = (r: Receipt): string => ids.get(receiptKey(r))!;
      inserted = chain.filter((r) => ids.has(receiptKey(r)));
      // 4. Credit what was inserted. When another transaction inserted some of them since step 1, match again.
      const plan =
        inserted.length < chain.length ? await rematchInserted(client, inserted, invoices, invoiceOf, idOf) : planned;
      const credits = creditRows(inserted, idOf, plan);
      await writeCredits(client, credits);
      result.exceptions = credits.raised;
      result.fulfilled = credits.fulfilled;
      result.credited = credits.credited;
    }
    result.inserted = inserted.length;
    result.duplicates = delivered - inserted.length;
    if (delivered > 0) await exec(client, q.bumpDeliveryCounts(cluster, source, delivered, inserted.length));
    if (checkpoint !== undefined) await exec(client, q.advanceCheckpoint(cluster, source, checkpoint));
    failpoint('ledger.after_insert_before_commit');
    return result;
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

  return { applyBatch, getCheckpoint, setCheckpoint, ...createInvoices(db), report: () => readReport(db) };
}

/**
 * The receipts of a batch not in the ledger yet, sorted by identity: every batch inserts (and so waits on
 * unique-index entries) in this same order. Only these few need sorting in a mostly-duplicate batch.
 */
async function unknownReceipts(client: PoolClient, cluster: string, batch: Receipt[]): Promise<Receipt[]> {
  const unknown = await rows<{ ord: number }>(
    client,
    q.selectUnknownReceipts(
      cluster,
      batch.map((r) => r.signature),
      batch.map((r) => r.ixIndex),
      batch.map((r) => r.innerIndex),
    ),
  );
  return unknown.map((r) => batch[r.ord - 1]).sort(compareReceipts);
}

/** Chain order (slot, then identity): decides which of two payments completes an invoice and which is excess. */
function compareChain(a: Receipt, b: Receipt): number {
  return compareSlot(a.slot, b.slot) || compareReceipts(a, b);
}

function compareSlot(a: bigint | null, b: bigint | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

function slotText(slot: bigint | number): string {
  const s = typeof slot === 'number' ? (Number.isSafeInteger(slot) ? BigInt(slot) : -1n) : slot;
  if (typeof s !== 'bigint' || s < 0n || s > (1n << 63n) - 1n) {
    throw new OncepayError(
      LEDGER_CODES.INVALID_CHECKPOINT,
      `checkpoint slot ${String(slot)} is not a non-negative integer`,
    );
  }
  return s.toString();
}

function columns(batch: Receipt[], invoiceOf: Map<string, string | null>): q.ReceiptColumns {
  return {
    invoiceId: batch.map((r) => invoiceOf.get(receiptKey(r)) ?? null),
    signature: batch.map((r) => r.signature),
    ixIndex: batch.map((r) => r.ixIndex),
    innerIndex: batch.map((r) => r.innerIndex),
    slot: batch.map((r) => (r.slot === null || r.slot === undefined ? null : r.slot.toString())),
    blockTime: batch.map((r) => (r.blockTime === null || r.blockTime === undefined ? null : String(r.blockTime))),
    program: batch.map((r) => r.program),
    kind: batch.map((r) => r.kind),
    mint: batch.map((r) => r.mint),
    source: batch.map((r) => r.source),
    destination: batch.map((r) => r.destination),
    destinationOwner: batch.map((r) => r.destinationOwner ?? null),
    amount: batch.map((r) => r.amount.toString()),
  };
}
