// `oncepay ingest`: decoded input → the ledger, in batches. Decoding is lenient (a bad transaction is reported
// with its code and skipped; the good ones of the same input still go in).
import type { Logger } from 'pino';
import { isOncepayError } from '../../common/errors';
import { decodeTransaction, readTransactionsInputLenient } from '../decode';
import type { Receipt } from '../decode/receipt';
import { applyInOrder, type Ledger } from '../ledger/ledger';
import type { ApplyBatchInput, ApplyBatchResult, ReceiptSource } from '../ledger/types';

export interface InputProblem {
  line?: number;
  index?: number;
  /** Position of the transaction among the input's transactions, when the problem is in one. */
  transaction?: number;
  code: string;
  message: string;
}

export interface DecodedInput {
  transactions: number;
  receipts: Receipt[];
  problems: InputProblem[];
}

/** Pure: text → receipts + problems. */
export function decodeInput(text: string, opts: { cluster?: string } = {}): DecodedInput {
  const { items, errors } = readTransactionsInputLenient(text);
  const problems: InputProblem[] = errors.map((e) => ({
    line: e.line,
    ...(e.index === undefined ? {} : { index: e.index }),
    code: e.code,
    message: e.message,
  }));
  const receipts: Receipt[] = [];
  items.forEach((tx, i) => {
    try {
      receipts.push(...decodeTransaction(tx, { cluster: opts.cluster }));
    } catch (e) {
      if (!isOncepayError(e)) throw e;
      problems.push({ transaction: i, code: e.code, message: e.message });
    }
  });
  return { transactions: items.length, receipts, problems };
}

export interface IngestSummary {
  cluster: string;
  source: ReceiptSource;
  transactions: number;
  receipts: number;
  batches: number;
  inserted: number;
  duplicates: number;
  rejected: number;
  problems: number;
  /** invoice id → decimal string credited by this run */
  credited: Record<string, string>;
  exceptions: Record<string, number>;
  fulfilled: string[];
}

export async function ingestReceipts(
  ledger: Ledger,
  input: DecodedInput,
  opts: { cluster: string; source: ReceiptSource; batchSize: number; log?: Logger },
): Promise<IngestSummary> {
  const s: IngestSummary = {
    cluster: opts.cluster,
    source: opts.source,
    transactions: input.transactions,
    receipts: input.receipts.length,
    batches: 0,
    inserted: 0,
    duplicates: 0,
    rejected: 0,
    problems: input.problems.length,
    credited: {},
    exceptions: {},
    fulfilled: [],
  };
  const credited = new Map<string, bigint>();
  const tally = (res: ApplyBatchResult) => {
    s.batches += 1;
    s.inserted += res.inserted;
    s.duplicates += res.duplicates;
    s.rejected += res.rejected.length;
    for (const c of res.credited) credited.set(c.invoiceId, (credited.get(c.invoiceId) ?? 0n) + c.amount);
    for (const e of res.exceptions) s.exceptions[e.kind] = (s.exceptions[e.kind] ?? 0) + 1;
    s.fulfilled.push(...res.fulfilled);
    opts.log?.debug({ batch: s.batches, inserted: res.inserted, duplicates: res.duplicates }, 'batch applied');
  };
  // Pipelined: the ledger prepares each batch while the one before commits. Batches still commit one after another,
  // in order; the first failure ends the run (and the batches after it are not applied: the checkpoint stays at the
  // last one committed).
  await applyInOrder(ledger, batches(input.receipts, opts), tally);
  s.credited = Object.fromEntries([...credited].map(([k, v]) => [k, v.toString()]));
  return s;
}

/** The receipts in batches of `batchSize`, each checkpointed at its highest slot (when it has one). */
function* batches(
  receipts: Receipt[],
  opts: { cluster: string; source: ReceiptSource; batchSize: number },
): Generator<ApplyBatchInput> {
  for (let i = 0; i < receipts.length; i += opts.batchSize) {
    const batch = receipts.slice(i, i + opts.batchSize);
    let max: bigint | null = null;
    for (const r of batch) if (typeof r.slot === 'bigint' && (max === null || r.slot > max)) max = r.slot;
    yield {
      cluster: opts.cluster,
      source: opts.source,
      receipts: batch,
      ...(max === null ? {} : { checkpoint: { slot: max } }),
    };
  }
}
