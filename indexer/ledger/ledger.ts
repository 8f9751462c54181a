// The ledger: one database transaction per batch. Receipts go in ON CONFLICT DO NOTHING, and only the rows this
// transaction actually inserted are matched, credited, raised as exceptions and fulfilled, all before COMMIT, so
// a redelivered, replayed or concurrent batch can never credit the same transfer twice.
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { failpoint } from '../../common/failpoint';
import { exec, one, type Query, rows, withTransaction } from '../../db/sql';
import { logger } from '../../common/log';
import type { Receipt } from '../decode/receipt';
import type { InvoiceState } from '../match/types';
import type { IndexerMetrics } from '../metrics';
import { readReport } from '../report';
import { LEDGER_CODES } from '../../common/errors/codes';
import {
  type CreditRows,
  Invoices,
  createInvoices,
  creditRows,
  lockCandidates,
  lockInvoices,
  lockStatement,
  planReceipts,
  type Planning,
  rematchInserted,
  writeCredits,
} from './invoices';
import { copyIn, receiptCopyChunks } from './copy';
import * as q from './queries';
import type { ApplyBatchInput, ApplyBatchResult, LedgerReport, ReceiptSource, RejectedReceipt } from './types';
import {
  assertCluster,
  assertSource,
  compareReceipts,
  compareSlot,
  dropRepeats,
  partitionReceipts,
  slotText,
  uniqueReceipts,
} from './validate';

export interface LedgerDeps {
  db: Pool;
  log?: Logger;
  metrics?: IndexerMetrics;
}

export interface BatchPipeline {
  /** Resolves once this batch committed (after every batch given before it), as applyBatch does. */
  apply(input: ApplyBatchInput): Promise<ApplyBatchResult>;
}

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
const UNIQUE_VIOLATION = '23505';
const MAX_TRIES = 5;
// Batches smaller than this do not change the probe prediction (a few receipts say little about the stream).
const PREDICT_MIN = 64;
// Fewer candidates than this go in by INSERT … ON CONFLICT: COPY's savepoint and extra round trips cost more than
// it saves on a handful of rows.
const COPY_MIN = 32;
// Rows per chunk of a COPY: PostgreSQL inserts one while node matches and writes the next (copy.ts copyIn). The
// first is shorter: PostgreSQL has nothing to do until it arrives.
const COPY_CHUNK_ROWS = 500;
const COPY_FIRST_CHUNK_ROWS = 100;

/**
 * A batch on its way in: what was delivered, and what node works out from it once (a retried transaction, or a
 * pipeline that prepared it while the batch before committed, reuses each part).
 */
interface Staged {
  cluster: string;
  source: ReceiptSource;
  receipts: readonly Receipt[];
  checkpoint: string | undefined;
  /** `cluster NUL source`: the path whose history predicts the probe. */
  path: string;
  /** Validated: the good receipts, the rejected ones set aside (and logged). */
  good?: Receipt[];
  rejected?: RejectedReceipt[];
  /** The good receipts in chain order, repeats dropped (the path without the probe). */
  chain?: Receipt[];
  /** The invoice lock (its keys from the batch as delivered). */
  lock?: Query;
}

/** A pipeline's batch: given, begun (its transaction started) or not, settled through `done`. */
interface Entry {
  s: Staged;
  begun: boolean;
  done: Promise<ApplyBatchResult>;
  resolve(result: ApplyBatchResult): void;
  reject(error: unknown): void;
}

function entry(s: Staged): Entry {
  const e = { s, begun: false } as Entry;
  e.done = new Promise<ApplyBatchResult>((resolve, reject) => {
    e.resolve = resolve;
    e.reject = reject;
  });
  return e;
}

/** What the last batch (of PREDICT_MIN receipts or more) of a path was: all new, mostly new, or mostly known. */
type PathHistory = 'all' | 'most' | 'few';

export function createLedger(deps: LedgerDeps): Ledger {
  const { db, metrics } = deps;
  const log = deps.log ?? logger('ledger');
  // Per (cluster, source): how new was its last batch? Mostly new: the next one skips the probe (a second descent
  // of the unique index per receipt, pure cost when nearly everything is new). All new, or probed: the candidates
  // go in by COPY, which fails on the first identity already there (then INSERT … ON CONFLICT runs instead). Only a
  // prediction: either way the unique constraint decides what is new, and a wrong guess costs time, never a credit.
  const history = new Map<string, PathHistory>();
  const probes = (path: string): boolean => {
    const last = history.get(path);
    return last !== 'all' && last !== 'most';
  };

  function stage(input: ApplyBatchInput): Staged {
    assertCluster(input.cluster);
    assertSource(input.source);
    return {
      cluster: input.cluster,
      source: input.source,
      receipts: input.receipts,
      checkpoint: input.checkpoint === undefined ? undefined : slotText(input.checkpoint.slot),
      path: `${input.cluster}\u0000${input.source}`,
    };
  }

  function validated(s: Staged): Receipt[] {
    if (s.good === undefined) {
      const { good, rejected } = partitionReceipts(s.receipts, s.cluster);
      for (const r of rejected)
        log.error({ code: r.code, index: r.index, cluster: s.cluster, source: s.source }, r.message);
      s.good = good;
      s.rejected = rejected;
    }
    return s.good;
  }

  /**
   * What node can do for a batch before its transaction, in two parts (each made once): in a pipeline, while the
   * batch before it sends its credits (the lock and validation), then while that batch commits (the chain order).
   * Never throws: what fails here fails again in the batch's own transaction, where the error belongs.
   */
  function prepareEarly(s: Staged | undefined): void {
    if (s === undefined) return;
    try {
      // The lock for the batch as delivered is only sent where the probe is skipped (applyInTransaction).
      if (!probes(s.path)) s.lock ??= lockStatement(s.receipts);
      validated(s);
    } catch {
      // made again (and fails) in its own transaction
    }
  }
  function prepareLate(s: Staged | undefined): void {
    if (s === undefined || s.good === undefined || probes(s.path)) return;
    try {
      s.chain ??= dropRepeats(chainOrder(s.good));
    } catch {
      // made again (and fails) in its own transaction
    }
  }

  /**
   * One batch, in one transaction (tried again on a deadlock). In a pipeline: `next()` names the batch given after
   * this one, prepared while this one waits on PostgreSQL; `gate` settles when the batch before this one has (the
   * transaction sends its invoice lock, then waits for it: a rejected gate rolls it back); `onCommitting` runs once
   * this one's COMMIT is on its way.
   */
  async function run(
    s: Staged,
    next?: () => Staged | undefined,
    gate?: Promise<void>,
    onCommitting?: () => void,
  ): Promise<ApplyBatchResult> {
    const probe = probes(s.path);
    const copy = probe || history.get(s.path) === 'all';
    for (let tries = 1; ; tries++) {
      try {
        const { result, distinct } = await withTransaction(
          db,
          (c) => applyInTransaction(c, s, probe, copy, next && (() => prepareEarly(next())), gate),
          'BEGIN',
          next &&
            (() => {
              onCommitting?.();
              prepareLate(next());
            }),
        );
        if (distinct >= PREDICT_MIN)
          history.set(s.path, result.inserted === distinct ? 'all' : result.inserted * 2 > distinct ? 'most' : 'few');
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

  function pipeline(): BatchPipeline {
    // The batches given and not settled yet, in order: the first is running; the second may have begun too (below).
    const queue: Entry[] = [];
    let broken: { cause: unknown } | undefined;
    const brokenError = (s: Staged, cause: unknown) =>
      new OncepayError(
        LEDGER_CODES.PIPELINE_BROKEN,
        'an earlier batch of this pipeline failed; this one was not applied',
        {
          cluster: s.cluster,
          source: s.source,
          cause: cause instanceof Error ? cause.message : String(cause),
        },
      );

    /**
     * Runs `e` once `gate` has resolved, except its invoice lock: that goes out at once, so a batch begun while the
     * one before commits waits on that batch's row locks inside PostgreSQL and takes them the moment it ends. Nothing
     * else of `e` runs before the batch before it committed (`gate`), and if that one failed, `e` rolls back.
     */
    function begin(e: Entry, gate: Promise<void>): void {
      e.begun = true;
      const after = () => queue[queue.indexOf(e) + 1];
      const outcome = run(
        e.s,
        () => after()?.s,
        gate,
        () => {
          // This batch's COMMIT is on its way: begin the next one given (if any, and not begun).
          const n = after();
          if (n && !n.begun)
            begin(
              n,
              e.done.then(
                () => undefined,
                (cause: unknown) => {
                  throw brokenError(n.s, cause);
                },
              ),
            );
        },
      );
      // Settled in order: a batch that fails before its gate (its lock refused) settles after the one before it.
      void Promise.allSettled([gate, outcome]).then(([, o]) => settle(e, o));
    }

    function settle(e: Entry, o: PromiseSettledResult<ApplyBatchResult>): void {
      queue.shift(); // e: batches settle in order (each one's work waits for the gate of the one before)
      if (o.status === 'fulfilled') e.resolve(o.value);
      else {
        broken ??= { cause: o.reason };
        e.reject(o.reason);
      }
      const n = queue[0];
      if (n && !n.begun) {
        if (broken) {
          // Not begun: it, and every batch after it, fails here without a transaction.
          for (const x of queue.splice(0)) x.reject(brokenError(x.s, broken.cause));
        } else begin(n, Promise.resolve());
      }
    }

    function apply(input: ApplyBatchInput): Promise<ApplyBatchResult> {
      let s: Staged;
      try {
        s = stage(input);
      } catch (e) {
        return Promise.reject(e);
      }
      if (broken) return Promise.reject(brokenError(s, broken.cause));
      const e = entry(s);
      queue.push(e);
      if (queue.length === 1) begin(e, Promise.resolve());
      return e.done;
    }
    return { apply };
  }

  async function applyInTransaction(
    client: PoolClient,
    s: Staged,
    probe: boolean,
    copy: boolean,
    aside: (() => void) | undefined,
    gate: Promise<void> | undefined,
  ): Promise<{ result: ApplyBatchResult; distinct: number }> {
    const { cluster, source } = s;
    const result: ApplyBatchResult = {
      inserted: 0,
      duplicates: 0,
      credited: [],
      exceptions: [],
      fulfilled: [],
      rejected: [],
    };
    // 1. Which receipts may be new, without repeats, in chain order. The probe (identity only) makes a
    //    mostly-duplicate batch cheap; when this path's last batch was mostly new it is skipped: every receipt is a
    //    candidate, and the insert below decides, as it does anyway.
    //    Without the probe the invoice lock (step 2) goes out first, for the keys of the batch as delivered
    //    (lockStatement takes only well-formed keys; a rejected or repeated receipt can only add one), and node
    //    validates, sorts and drops repeats while PostgreSQL takes the locks (unless that was done already).
    let locking: Promise<InvoiceState[]> | undefined;
    if (!probe) {
      locking = lockInvoices(client, (s.lock ??= lockStatement(s.receipts)));
      locking.catch(() => undefined); // awaited below
    }
    // A pipeline's batch begun early does nothing more until the batch before it committed (its rows locked by
    // that batch, the lock above waits inside PostgreSQL and takes them as it ends).
    if (gate) await gate;
    const good = validated(s);
    const delivered = good.length;
    let chain: Receipt[];
    let distinct: number;
    if (probe) {
      const batch = uniqueReceipts(good);
      distinct = batch.length;
      const candidates = batch.length === 0 ? [] : await unknownReceipts(client, cluster, batch);
      // 2. Lock the invoices they could pay (sent before node sorts them), and plan the credits, so each row goes
      //    in with its invoice id.
      if (candidates.length > 0) {
        locking = lockCandidates(client, candidates);
        locking.catch(() => undefined); // awaited below
      }
      chain = chainOrder(candidates);
    } else {
      chain = s.chain ??= dropRepeats(chainOrder(good));
      distinct = chain.length;
    }
    // Lock order for every batch: invoices (by id) → receipts (in chain order: slot, then identity, as the COPY
    // sends them and the INSERT sorts them) → counters → checkpoint.
    let inserted: Receipt[] = [];
    if (chain.length === 0) await locking;
    else {
      const invoices = await locking!;
      // The match runs in chain order, as far as each COPY chunk needs it (the rest, if the COPY fails, at plan()).
      const planning = planReceipts(chain, invoices);
      // 3. Insert. By COPY when the candidates are expected to be new: it either inserts every one of them (the
      //    unique constraint let each in: no other transaction has them) or fails on the first identity already
      //    there and is rolled back to its savepoint. Otherwise, or then, INSERT … ON CONFLICT DO NOTHING, whose
      //    RETURNING lists the rows this transaction inserted (by position): only those may be credited.
      const byCopy = copy && chain.length >= COPY_MIN;
      let idOf: (r: Receipt) => string;
      let credits: CreditRows | undefined;
      // Made while PostgreSQL inserts the COPY's last chunk (the whole batch is matched by then).
      const creditCopied = () => {
        credits = creditRows(chain, planning.plan());
      };
      if (byCopy && (await copyReceipts(client, cluster, source, chain, planning, creditCopied))) {
        inserted = chain;
        if (credits === undefined) creditCopied();
        idOf = await idsOfExceptions(client, cluster, credits!.exceptions.receipts);
      } else {
        let plan = planning.plan();
        const invoiceIds = planning.invoiceIds;
        const insertedRows = await rows<{ ord: number; id: string }>(
          client,
          q.insertReceipts(cluster, source, columns(chain, invoiceIds)),
        );
        const ids = new Map<Receipt, string>();
        for (const row of insertedRows) ids.set(chain[row.ord - 1], row.id);
        idOf = (r: Receipt): string => ids.get(r)!;
        inserted = ids.size === chain.length ? chain : chain.filter((r) => ids.has(r));
        // 4. Credit what was inserted. When some were in the ledger already (inserted by another transaction since
        //    step 1, or not probed), match again on what this one did insert.
        if (inserted.length < chain.length) {
          const at = new Map(chain.map((r, i) => [r, i]));
          const plannedOf = (r: Receipt) => invoiceIds[at.get(r)!];
          plan = await rematchInserted(client, inserted, invoices, plannedOf, idOf);
        }
        credits = creditRows(inserted, plan);
      }
      // The credit UPDATE is on its way (writeCredits sends it before it first waits): node's turn for `aside`
      // (the counters below call it too, for a batch with nothing to credit: what it made once, it does not redo).
      const writing = writeCredits(client, credits!, idOf);
      aside?.();
      await writing;
      result.exceptions = credits!.raised;
      result.fulfilled = credits!.fulfilled;
      result.credited = credits!.credited;
    }
    result.inserted = inserted.length;
    result.duplicates = delivered - inserted.length;
    if (delivered > 0) {
      const counting = exec(client, q.bumpDeliveryCounts(cluster, source, delivered, inserted.length));
      aside?.();
      await counting;
    }
    if (s.checkpoint !== undefined) await exec(client, q.advanceCheckpoint(cluster, source, s.checkpoint));
    failpoint('ledger.after_insert_before_commit');
    return { result, distinct };
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
    pipeline,
    getCheckpoint,
    setCheckpoint,
    ...createInvoices(db),
    report: () => readReport(db),
  };
}

/**
 * `inputs` through one pipeline of `ledger`, two in flight (the next given before the one before is awaited), with
 * `each` called on every result in order. Rejects with the first failure; the batches after it are not applied.
 */
export async function applyInOrder(
  ledger: Pick<Ledger, 'pipeline'>,
  inputs: Iterable<ApplyBatchInput>,
  each: (result: ApplyBatchResult) => void = () => undefined,
): Promise<void> {
  const pipe = ledger.pipeline();
  let before: Promise<void> | undefined;
  for (const input of inputs) {
    const applying = pipe.apply(input).then(each);
    applying.catch(() => undefined); // awaited next turn (or below); the error that ends the run is the first one
    await before;
    before = applying;
  }
  await before;
}

/** The receipts of a batch not in the ledger yet (in batch order). */
async function unknownReceipts(client: PoolClient, cluster: string, batch: Receipt[]): Promise<Receipt[]> {
  const unknown = await rows<{ ord: number }>(client, q.selectUnknownReceipts(cluster, identities(batch)));
  return unknown.map((r) => batch[r.ord - 1]);
}

/**
 * COPY the receipts in (chain order, as `chain` holds them: so overlapping batches wait on each other's index
 * entries in one order), each chunk matched just before it is made, inside a savepoint. `whileLastInserts` runs
 * once the last chunk is on its way, while PostgreSQL inserts it. False, with nothing inserted, when one of them is
 * in the ledger already.
 */
async function copyReceipts(
  client: PoolClient,
  cluster: string,
  source: ReceiptSource,
  chain: Receipt[],
  planning: Planning,
  whileLastInserts: () => void,
): Promise<boolean> {
  // The COPY follows the SAVEPOINT without waiting for its answer (pg sends them in order on the connection).
  const saved = exec(client, q.savepoint());
  saved.catch(() => undefined); // awaited below
  try {
    await copyIn(
      client,
      q.COPY_RECEIPTS,
      thenRun(
        receiptCopyChunks(
          cluster,
          source,
          chain,
          planning.invoiceIds,
          COPY_CHUNK_ROWS,
          planning.through,
          COPY_FIRST_CHUNK_ROWS,
        ),
        whileLastInserts,
      ),
    );
    await saved;
  } catch (e) {
    await saved; // a failed SAVEPOINT is the error to report, not the COPY refused after it
    if ((e as { code?: string }).code !== UNIQUE_VIOLATION) throw e;
    await exec(client, q.rollbackToSavepoint());
    return false;
  }
  await exec(client, q.releaseSavepoint());
  return true;
}

/** `chunks`, then `after()` once the last of them has been taken (copyIn asks for the next while it is sent). */
function* thenRun(chunks: Iterable<string>, after: () => void): Generator<string> {
  yield* chunks;
  after();
}

/**
 * The ids of the copied receipts that raise an exception (exceptions.receipt_id): COPY answers no ids, and only
 * these rows need theirs. One probe of the identity index each.
 */
async function idsOfExceptions(
  client: PoolClient,
  cluster: string,
  raising: readonly Receipt[],
): Promise<(r: Receipt) => string> {
  const ids = new Map<Receipt, string>();
  const distinct = [...new Set(raising)];
  if (distinct.length > 0) {
    const found = await rows<{ ord: number; id: string }>(client, q.selectReceiptIds(cluster, identities(distinct)));
    for (const row of found) ids.set(distinct[row.ord - 1], row.id);
  }
  return (r: Receipt): string => ids.get(r)!;
}

function identities(receipts: Receipt[]): q.Identities {
  return {
    signatures: receipts.map((r) => r.signature),
    ixIndexes: receipts.map((r) => r.ixIndex),
    innerIndexes: receipts.map((r) => r.innerIndex),
  };
}

/**
 * The receipts in chain order (slot, then identity; no slot last): decides which of two payments completes an
 * invoice and which is excess. Sorted on number keys (a slot is far below 2^53): comparing bigints is the costly
 * part of a comparator; a slot beyond it would fall back to comparing the bigints.
 */
function chainOrder(receipts: readonly Receipt[]): Receipt[] {
  const n = receipts.length;
  const keys = new Float64Array(n);
  let exact = true;
  for (let i = 0; i < n; i++) {
    const slot = receipts[i].slot;
    const key = slot === null || slot === undefined ? Infinity : Number(slot);
    if (key > Number.MAX_SAFE_INTEGER && key !== Infinity) exact = false;
    keys[i] = key;
  }
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const bySlot = exact
    ? (a: number, b: number) => keys[a] - keys[b]
    : (a: number, b: number) => compareSlot(receipts[a].slot ?? null, receipts[b].slot ?? null);
  order.sort((a, b) => bySlot(a, b) || compareReceipts(receipts[a], receipts[b]));
  return order.map((i) => receipts[i]);
}

/** The batch as statement columns, in one pass (the receipt's planned invoice id from the match). */
function columns(batch: Receipt[], invoiceIds: (string | null)[]): q.ReceiptColumns {
  const n = batch.length;
  const c: q.ReceiptColumns = {
    invoiceId: new Array(n),
    signature: new Array(n),
    ixIndex: new Array(n),
    innerIndex: new Array(n),
    slot: new Array(n),
    blockTime: new Array(n),
    program: new Array(n),
    kind: new Array(n),
    mint: new Array(n),
    source: new Array(n),
    destination: new Array(n),
    destinationOwner: new Array(n),
    amount: new Array(n),
  };
  for (let i = 0; i < n; i++) {
    const r = batch[i];
    c.invoiceId[i] = invoiceIds[i];
    c.signature[i] = r.signature;
    c.ixIndex[i] = r.ixIndex;
    c.innerIndex[i] = r.innerIndex;
    c.slot[i] = r.slot === null || r.slot === undefined ? null : r.slot.toString();
    c.blockTime[i] = r.blockTime === null || r.blockTime === undefined ? null : String(r.blockTime);
    c.program[i] = r.program;
    c.kind[i] = r.kind;
    c.mint[i] = r.mint;
    c.source[i] = r.source;
    c.destination[i] = r.destination;
    c.destinationOwner[i] = r.destinationOwner ?? null;
    c.amount[i] = r.amount.toString();
  }
  return c;
}
