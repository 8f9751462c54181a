// A batch of new receipts as one COPY … FROM STDIN: PostgreSQL parses COPY's text rows far more cheaply than
// unnest() of thirteen array parameters, and COPY writes the heap in multi-row steps. COPY has no ON CONFLICT: the
// ledger runs it inside a savepoint (ledger.ts copyReceipts) and falls back to INSERT … ON CONFLICT when an
// identity is there already.
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Receipt } from '../decode/receipt';

const SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value in COPY's text format: backslash, tab, newline and carriage return escaped; null as \N. */
export function copyValue(v: string | number | bigint | null | undefined): string {
  if (v === null || v === undefined) return '\\N';
  const s = typeof v === 'string' ? v : String(v);
  return SPECIAL.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]) : s;
}

/** The rows of queries.ts COPY_RECEIPTS, one line per receipt, in the given order. */
export function receiptCopyText(
  cluster: string,
  firstSource: string,
  receipts: readonly Receipt[],
  invoiceOf: Map<Receipt, string | null>,
): string {
  const head = `${copyValue(cluster)}\t`;
  const tail = `\t${copyValue(firstSource)}\n`;
  const lines = new Array<string>(receipts.length);
  for (let i = 0; i < receipts.length; i++) {
    const r = receipts[i];
    lines[i] =
      head +
      `${copyValue(r.signature)}\t${r.ixIndex}\t${r.innerIndex}\t${copyValue(r.slot)}\t${copyValue(r.blockTime)}\t` +
      `${copyValue(r.program)}\t${copyValue(r.kind)}\t${copyValue(r.mint)}\t${copyValue(r.source)}\t` +
      `${copyValue(r.destination)}\t${copyValue(r.destinationOwner)}\t${r.amount}\t${copyValue(invoiceOf.get(r))}` +
      tail;
  }
  return lines.join('');
}

/** Runs a COPY … FROM STDIN with `text` as its whole input; resolves once the server has taken every row. */
export function copyIn(client: PoolClient, sql: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(sql));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(text);
  });
}
