// The COPY path: candidates expected to be new go in by one COPY receipts FROM STDIN (copy.ts writes its rows), in
// chain order, inside a savepoint, in chunks matched just before each is written, so node matches the next chunk
// while PostgreSQL inserts the last. It inserts all of them or, on the first identity already there (another
// transaction got it in first), is rolled back to the savepoint and the INSERT path (insert-path.ts) runs instead.
import type { PoolClient } from 'pg';
import { exec, rows } from '../../db/sql';
import type { Receipt } from '../decode/receipt';
import { copyIn, receiptCopyChunks } from './copy';
import { type CreditRows, creditRows, type Planning } from './credits';
import type { Inserted } from './insert-path';
import { identities } from './probe';
import * as q from './queries';
import type { ReceiptSource } from './types';

// Fewer candidates than this go in by INSERT … ON CONFLICT: COPY's savepoint and extra round trips cost more than
// it saves on a handful of rows.
export const COPY_MIN = 32;
// Rows per chunk of a COPY: PostgreSQL inserts one while node matches and writes the next (copy.ts copyIn). The
// first is shorter: PostgreSQL has nothing to do until it arrives.
const COPY_CHUNK_ROWS = 500;
const COPY_FIRST_CHUNK_ROWS = 100;
const UNIQUE_VIOLATION = '23505';

/** Whether `candidates` receipts go in by COPY, given whether the path's prediction expects them new. Pure. */
export function usesCopy(expectedNew: boolean, candidates: number): boolean {
  return expectedNew && candidates >= COPY_MIN;
}

/**
 * `chain` (chain order, no repeats, matched by `planning`) by COPY. Undefined, with nothing inserted, when one of
 * them is in the ledger already. The credits are made while PostgreSQL inserts the last chunk.
 */
export async function insertByCopy(
  client: PoolClient,
  cluster: string,
  source: ReceiptSource,
  chain: Receipt[],
  planning: Planning,
): Promise<Inserted | undefined> {
  const made: { credits?: CreditRows } = {};
  const creditCopied = () => {
    made.credits = creditRows(chain, planning.plan());
  };
  if (!(await copyReceipts(client, cluster, source, chain, planning, creditCopied))) return undefined;
  const credits = made.credits ?? creditRows(chain, planning.plan());
  return { inserted: chain, credits, idOf: await idsOfExceptions(client, cluster, credits.exceptions.receipts) };
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
    const chunks = receiptCopyChunks(
      cluster,
      source,
      chain,
      planning.invoiceIds,
      COPY_CHUNK_ROWS,
      planning.through,
      COPY_FIRST_CHUNK_ROWS,
    );
    await copyIn(client, q.COPY_RECEIPTS, thenRun(chunks, whileLastInserts));
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
export function* thenRun(chunks: Iterable<string>, after: () => void): Generator<string> {
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
