// A batch of new receipts as one COPY … FROM STDIN: PostgreSQL parses COPY's text rows far more cheaply than
// unnest() of thirteen array parameters, and COPY writes the heap in multi-row steps. COPY has no ON CONFLICT: the
// ledger runs it inside a savepoint (copy-path.ts copyReceipts) and falls back to INSERT … ON CONFLICT when an
// identity is there already.
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Receipt } from '../decode/receipt';

const SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value in COPY's text format: backslash, tab, newline and carriage return escaped; null as \N. */
export function copyValue(v: string | number | bigint | null | undefined): string {
  if (v === null || v === undefined) return '\\N';
  return typeof v === 'string' ? text(v) : String(v);
}

/** A text value in COPY's text format (the common case, nothing to escape, returns the string itself). */
function text(s: string): string {
  return SPECIAL.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]) : s;
}

/**
 * The rows of queries.ts COPY_RECEIPTS, one line per receipt: `receipts[i]` for i in [from, to), in that order, with
 * its invoice id `invoiceIds[i]` (an array by position, so no map from receipt to invoice is needed).
 */
export function receiptCopyText(
  cluster: string,
  firstSource: string,
  receipts: readonly Receipt[],
  invoiceIds: readonly (string | null)[],
  from = 0,
  to = receipts.length,
): string {
  const head = `${copyValue(cluster)}\t`;
  const tail = `\t${copyValue(firstSource)}\n`;
  const lines = new Array<string>(to - from);
  for (let i = from; i < to; i++) {
    const r = receipts[i];
    const slot = r.slot === null || r.slot === undefined ? '\\N' : r.slot;
    const blockTime = r.blockTime === null || r.blockTime === undefined ? '\\N' : r.blockTime;
    const mint = r.mint === null || r.mint === undefined ? '\\N' : text(r.mint);
    const owner = r.destinationOwner === null || r.destinationOwner === undefined ? '\\N' : text(r.destinationOwner);
    const inv = invoiceIds[i];
    lines[i - from] =
      `${head}${text(r.signature)}\t${r.ixIndex}\t${r.innerIndex}\t${slot}\t${blockTime}\t${text(r.program)}\t${text(
        r.kind,
      )}\t${mint}\t${text(r.source)}\t${text(r.destination)}\t${owner}\t${r.amount}\t${inv === null ? '\\N' : text(inv)}${tail}`;
  }
  return lines.join('');
}

/**
 * `receiptCopyText` in chunks of `rows` lines (the first of `first`: PostgreSQL waits for it, so it is kept short),
 * each made only when asked for: copyIn writes one to the server while the next is being made, so PostgreSQL parses
 * and inserts rows while node writes the following ones. `prepare(end)` runs before the chunk that ends at `end` is
 * made (the ledger matches those receipts then, so their invoice ids are in `invoiceIds`).
 */
export function* receiptCopyChunks(
  cluster: string,
  firstSource: string,
  receipts: readonly Receipt[],
  invoiceIds: readonly (string | null)[],
  rows: number,
  prepare: (end: number) => void = () => undefined,
  first = rows,
): Generator<string> {
  for (let from = 0, n = first; from < receipts.length; from += n, n = rows) {
    const to = Math.min(from + n, receipts.length);
    prepare(to);
    yield receiptCopyText(cluster, firstSource, receipts, invoiceIds, from, to);
  }
}

/**
 * Runs a COPY … FROM STDIN with `input` (the whole text, or its chunks) as its input; resolves once the server has
 * taken every row. Chunks are asked for one at a time: the next is made while the last is on its way (a chunk
 * waits only for the one before it to drain), and none is made once the COPY has failed.
 */
export async function copyIn(client: PoolClient, sql: string, input: string | Iterable<string>): Promise<void> {
  const stream = client.query(copyFrom(sql));
  const done = new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', () => resolve());
  });
  done.catch(() => undefined); // awaited below (and raced at every chunk: a failed COPY stops the chunks)
  let drained: Promise<unknown> = Promise.resolve();
  for (const chunk of typeof input === 'string' ? [input] : input) {
    await Promise.race([drained, done]);
    drained = stream.write(chunk) ? Promise.resolve() : new Promise((resolve) => stream.once('drain', resolve));
  }
  stream.end();
  await done;
}
