// The ledger: one database transaction per batch. Receipts go in ON CONFLICT DO NOTHING, and only the rows this
// transaction actually inserted are matched, credited, raised as exceptions and fulfilled, all before COMMIT, so
// a redelivered, replayed or concurrent batch can never credit the same transfer twice.
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { failpoint } from '../../common/failpoint';
import { logger } from '../../common/log';
import { isBaseUnits } from '../../common/amount';
import type { Receipt } from '../decode/receipt';
import { matchBatch } from '../match/match';
import type { BatchOutcome, InvoiceState } from '../match/types';
import type { IndexerMetrics } from '../metrics';
import { LEDGER_CODES } from './codes';
import { fulfilmentOpId, invoicePaidPayload } from './fulfilment';
import * as q from './queries';
import type {
  ApplyBatchInput,
  ApplyBatchResult,
  InvoiceRow,
  LedgerReport,
  NewInvoice,
  RaisedException,
  ReceiptSource,
} from './types';
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

export interface Ledger {
  applyBatch(input: ApplyBatchInput): Promise<ApplyBatchResult>;
  getCheckpoint(cluster: string, source: ReceiptSource): Promise<bigint | null>;
  setCheckpoint(cluster: string, source: ReceiptSource, slot: bigint | number): Promise<bigint>;
  /** Idempotent: the same invoice again is a no-op; the same id with other fields is INVOICE_CONFLICT. */
  createInvoice(inv: NewInvoice): Promise<{ created: boolean; invoice: InvoiceRow }>;
  getInvoice(id: string): Promise<InvoiceRow | null>;
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
      const client = await db.connect();
      try {
        const result = await applyInTransaction(client, input.cluster, input.source, batch, good.length, checkpoint);
        result.rejected = rejected;
        if (metrics) {
          metrics.receiptsTotal.inc({ cluster: input.cluster, source: input.source }, result.inserted);
          metrics.duplicatesTotal.inc({ cluster: input.cluster, source: input.source }, result.duplicates);
          for (const e of result.exceptions) metrics.exceptionsTotal.inc({ kind: e.kind });
        }
        return result;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        const code = (e as { code?: string }).code;
        if (code && RETRYABLE.has(code) && tries < MAX_TRIES) {
          log.warn({ code, tries }, 'ledger batch rolled back, retrying');
          continue;
        }
        throw e;
      } finally {
        client.release();
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
    await client.query('BEGIN');
    // 1. Which receipts are new (identity only: cheap for a mostly-duplicate batch).
    const unknown = batch.length === 0 ? [] : await unknownReceipts(client, cluster, batch);
    let inserted: Receipt[] = [];
    if (unknown.length > 0) {
      // 2. Lock the invoices they could pay and plan the credits, so each row goes in with its invoice id.
      //    Lock order for every batch: invoices (by id) → receipts (by identity) → counters → checkpoint.
      const chain = [...unknown].sort(compareChain);
      const invoices = await lockCandidates(client, chain);
      let plan = matchBatch(chain, invoices);
      const planned = new Map(chain.map((r, i) => [receiptKey(r), plan.outcomes[i].invoiceId]));
      // 3. Insert. RETURNING lists the rows this transaction inserted: only those may be credited.
      const rows = (
        await client.query<{ id: string; signature: string; ix_index: number; inner_index: number }>(
          q.insertReceipts(cluster, source, columns(unknown, planned)),
        )
      ).rows;
      const ids = new Map(
        rows.map((row) => [
          receiptKey({ signature: row.signature, ixIndex: row.ix_index, innerIndex: row.inner_index }),
          row.id,
        ]),
      );
      inserted = chain.filter((r) => ids.has(receiptKey(r)));
      if (inserted.length < chain.length) {
        // Another transaction inserted some of them since step 1: plan again on what we did insert, and fix
        // the invoice id of any row whose match changed with it.
        plan = matchBatch(inserted, invoices);
        const fix = inserted
          .map((r, i) => [r, plan.outcomes[i].invoiceId] as const)
          .filter(([r, inv]) => planned.get(receiptKey(r)) !== inv);
        if (fix.length > 0)
          await client.query(
            q.setReceiptInvoices(
              fix.map(([r]) => ids.get(receiptKey(r))!),
              fix.map(([, inv]) => inv),
            ),
          );
      }
      await writePlan(client, inserted, (r) => ids.get(receiptKey(r))!, plan, result);
    }
    result.inserted = inserted.length;
    result.duplicates = delivered - inserted.length;
    if (delivered > 0) await client.query(q.bumpDeliveryCounts(cluster, source, delivered, inserted.length));
    if (checkpoint !== undefined) await client.query(q.advanceCheckpoint(cluster, source, checkpoint));
    failpoint('ledger.after_insert_before_commit');
    await client.query('COMMIT');
    failpoint('ledger.after_commit');
    return result;
  }

  async function lockCandidates(client: PoolClient, receipts: Receipt[]): Promise<InvoiceState[]> {
    const addresses = new Set<string>();
    const refs = new Set<string>();
    for (const r of receipts) {
      addresses.add(r.destination);
      if (r.destinationOwner) addresses.add(r.destinationOwner);
      // Account keys need not be looked up: a reference found only among them counts when the money went to
      // the invoice's deposit address, and that address is already in `addresses`.
      for (const k of r.references ?? []) refs.add(k);
    }
    const rows = (await client.query(q.lockCandidateInvoices([...addresses], [...refs]))).rows;
    return rows.map((x) => ({ ...invoiceFields(x), createdSeq: Number(x.created_epoch) }));
  }

  /** Credits, exceptions, fulfilments + outbox rows of the inserted receipts (in chain order, as planned). */
  async function writePlan(
    client: PoolClient,
    inserted: Receipt[],
    idOf: (r: Receipt) => string,
    plan: BatchOutcome,
    result: ApplyBatchResult,
  ): Promise<void> {
    const ex = {
      kinds: [] as string[],
      receiptIds: [] as string[],
      invoiceIds: [] as (string | null)[],
      amounts: [] as string[],
      details: [] as string[],
    };
    const credited = new Map<string, bigint>();
    plan.outcomes.forEach((o, i) => {
      const r = inserted[i];
      if (o.invoiceId && o.credit > 0n) credited.set(o.invoiceId, (credited.get(o.invoiceId) ?? 0n) + o.credit);
      for (const e of o.exceptions) {
        ex.kinds.push(e.kind);
        ex.receiptIds.push(idOf(r));
        ex.invoiceIds.push(e.invoiceId);
        ex.amounts.push(e.amount.toString());
        ex.details.push(e.detail);
        const raised: RaisedException = {
          kind: e.kind,
          invoiceId: e.invoiceId,
          amount: e.amount,
          signature: r.signature,
          ixIndex: r.ixIndex,
          innerIndex: r.innerIndex,
        };
        result.exceptions.push(raised);
      }
      if (o.paidNow && o.invoiceId) result.fulfilled.push(o.invoiceId);
    });
    const changed = plan.invoices;
    if (changed.length > 0) {
      await client.query(
        q.updateInvoiceCredits(
          changed.map((i) => i.id),
          changed.map((i) => i.creditedAmount.toString()),
          changed.map((i) => i.status === 'paid'),
        ),
      );
    }
    if (ex.kinds.length > 0)
      await client.query(q.insertExceptions(ex.kinds, ex.receiptIds, ex.invoiceIds, ex.amounts, ex.details));
    if (result.fulfilled.length > 0) {
      const byId = new Map(changed.map((i) => [i.id, i]));
      const paid = result.fulfilled.map((id) => byId.get(id)!);
      await client.query(
        q.insertFulfilments(
          paid.map((i) => fulfilmentOpId(i.id)),
          paid.map((i) => i.id),
          paid.map((i) => i.merchant),
          paid.map((i) => JSON.stringify(invoicePaidPayload(i))),
        ),
      );
    }
    result.credited = [...credited].map(([invoiceId, amount]) => ({ invoiceId, amount }));
  }

  async function getCheckpoint(cluster: string, source: ReceiptSource): Promise<bigint | null> {
    assertSource(source);
    const { rows } = await db.query(q.getCheckpoint(cluster, source));
    return rows.length ? BigInt(rows[0].slot) : null;
  }

  async function setCheckpoint(cluster: string, source: ReceiptSource, slot: bigint | number): Promise<bigint> {
    assertCluster(cluster);
    assertSource(source);
    await db.query(q.advanceCheckpoint(cluster, source, slotText(slot)));
    return (await getCheckpoint(cluster, source))!;
  }

  async function getInvoice(id: string): Promise<InvoiceRow | null> {
    const { rows } = await db.query(q.getInvoice(id));
    if (rows.length === 0) return null;
    const x = rows[0];
    return { ...invoiceFields(x), paidAt: x.paid_at ? new Date(x.paid_at).toISOString() : null };
  }

  async function createInvoice(inv: NewInvoice): Promise<{ created: boolean; invoice: InvoiceRow }> {
    const bad = (m: string) => new OncepayError(LEDGER_CODES.INVALID_INVOICE, m, { id: inv.id });
    if (typeof inv.id !== 'string' || inv.id.length === 0) throw bad('id must be a non-empty string');
    if (typeof inv.mint !== 'string' || inv.mint.length === 0) throw bad('mint must be a non-empty string');
    if (!isBaseUnits(inv.expectedAmount) || inv.expectedAmount === 0n) throw bad('amount must be a u64 above 0');
    const depositAddress = inv.depositAddress ?? null;
    const referenceKey = inv.referenceKey ?? null;
    if (depositAddress === null && referenceKey === null)
      throw bad('an invoice needs a deposit address or a reference key');
    const merchant = inv.merchant ?? 'default';
    const { rows } = await db.query(
      q.insertInvoice({
        id: inv.id,
        merchant,
        mint: inv.mint,
        expected: inv.expectedAmount.toString(),
        depositAddress,
        referenceKey,
      }),
    );
    const existing = await getInvoice(inv.id);
    if (!existing) {
      // Not inserted and not there: the reference key belongs to another invoice.
      throw new OncepayError(
        LEDGER_CODES.INVOICE_CONFLICT,
        `reference key ${referenceKey} already belongs to another invoice`,
        { id: inv.id, referenceKey },
      );
    }
    const same =
      existing.merchant === merchant &&
      existing.mint === inv.mint &&
      existing.expectedAmount === inv.expectedAmount &&
      existing.depositAddress === depositAddress &&
      existing.referenceKey === referenceKey;
    if (!same)
      throw new OncepayError(LEDGER_CODES.INVOICE_CONFLICT, `invoice ${inv.id} exists with other fields`, {
        id: inv.id,
      });
    return { created: rows.length === 1, invoice: existing };
  }

  async function report(): Promise<LedgerReport> {
    const [inv, rec, del, exc, out, cp] = await Promise.all([
      db.query(q.reportInvoices()),
      db.query(q.reportReceipts()),
      db.query(q.reportDeliveries()),
      db.query(q.reportExceptions()),
      db.query(q.reportOutbox()),
      db.query(q.reportCheckpoints()),
    ]);
    const bySource: Record<string, number> = {};
    let total = 0;
    let matched = 0;
    for (const r of rec.rows) {
      bySource[r.first_source] = Number(r.n);
      total += Number(r.n);
      matched += Number(r.matched);
    }
    const exceptions: LedgerReport['exceptions'] = {};
    for (const r of exc.rows) exceptions[r.kind] = { count: Number(r.n), amount: r.amount };
    const outbox: Record<string, number> = { pending: 0, delivering: 0, delivered: 0, dead: 0 };
    for (const r of out.rows) outbox[r.state] = Number(r.n);
    return {
      invoices: inv.rows.map((r) => ({
        id: r.id,
        merchant: r.merchant,
        mint: r.mint,
        expected: r.expected,
        credited: r.credited,
        status: r.status,
        paidAt: r.paid_at,
      })),
      receipts: { total, matched, bySource },
      deliveries: del.rows.map((r) => ({
        cluster: r.cluster,
        source: r.source,
        delivered: Number(r.delivered),
        inserted: Number(r.inserted),
        duplicates: Number(r.duplicates),
      })),
      exceptions,
      outbox,
      checkpoints: cp.rows,
    };
  }

  return { applyBatch, getCheckpoint, setCheckpoint, createInvoice, getInvoice, report };
}

/**
 * The receipts of a batch not in the ledger yet, sorted by identity: every batch inserts (and so waits on
 * unique-index entries) in this same order. Only these few need sorting in a mostly-duplicate batch.
 */
async function unknownReceipts(client: PoolClient, cluster: string, batch: Receipt[]): Promise<Receipt[]> {
  const { rows } = await client.query<{ ord: number }>(
    q.selectUnknownReceipts(
      cluster,
      batch.map((r) => r.signature),
      batch.map((r) => r.ixIndex),
      batch.map((r) => r.innerIndex),
    ),
  );
  return rows.map((r) => batch[r.ord - 1]).sort(compareReceipts);
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

/** The columns of an invoices row that both the matcher's state and the ledger's InvoiceRow carry. */
function invoiceFields(x: QueryResultRow): Omit<InvoiceState, 'createdSeq'> {
  return {
    id: x.id,
    merchant: x.merchant,
    mint: x.mint,
    expectedAmount: BigInt(x.expected_amount),
    creditedAmount: BigInt(x.credited_amount),
    depositAddress: x.deposit_address,
    referenceKey: x.reference_key,
    status: x.status,
  };
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
