// The one SQL seam. Modules build statements as values (`Query`) in their own `queries.ts`; this file runs them.
// Every transaction in the runtime code goes through `withTransaction` (no hand-written BEGIN/COMMIT elsewhere).
import type { ClientBase, Pool, PoolClient, QueryConfig, QueryResultRow } from 'pg';

/** A statement and its parameters, built by a module's `queries.ts` and run by `rows`/`one`/`exec`. */
export interface Query {
  text: string;
  values: unknown[];
  /**
   * A prepared statement's name: each connection parses and plans the text once, then only binds and executes it.
   * For a hot statement of constant text (one name, one text, across the codebase).
   */
  name?: string;
}

/** What pg's query() takes for `q`: a named statement runs as a prepared statement of its connection. */
function config(q: Query): QueryConfig {
  return q.name ? { name: q.name, text: q.text, values: q.values } : { text: q.text, values: q.values };
}

/** Anything a statement can run on: the pool, or a client inside a transaction. */
export type Db = Pool | PoolClient;

/**
 * A PostgreSQL array literal (`{"a","b",NULL}`) for a parameter cast to an array type (`$1::text[]`, `$2::int[]`):
 * what pg sends for a JavaScript array, built in one pass. pg's own conversion runs two regular-expression
 * replaces on every element; a ledger batch of 5,000 receipts has 65,000 elements.
 */
export function arrayLiteral(values: readonly (string | number | null | undefined)[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) parts[i] = 'NULL';
    else if (typeof v === 'number') parts[i] = String(v);
    else parts[i] = `"${v.includes('"') || v.includes('\\') ? v.replace(/["\\]/g, '\\$&') : v}"`;
  }
  return `{${parts.join(',')}}`;
}

/** Every row the statement returns. */
export async function rows<R extends QueryResultRow>(db: Db, q: Query): Promise<R[]> {
  return (await db.query<R>(config(q))).rows;
}

/** The statement's first row, or null when it returns none. */
export async function one<R extends QueryResultRow>(db: Db, q: Query): Promise<R | null> {
  return (await db.query<R>(config(q))).rows[0] ?? null;
}

/** Runs the statement; resolves to the number of rows it touched. */
export async function exec(db: Db, q: Query): Promise<number> {
  return (await db.query(config(q))).rowCount ?? 0;
}

/**
 * Runs `work` in one transaction on one pooled client: BEGIN, the work, COMMIT; on any error ROLLBACK (best effort)
 * and rethrow; the client always goes back to the pool. `begin` may name an isolation level or other modes
 * (e.g. 'BEGIN ISOLATION LEVEL SERIALIZABLE'). `whileCommitting` runs (synchronously) once the COMMIT is on its
 * way, before its answer: node work of the caller's that overlaps the commit's flush. It must not throw (an error
 * from it is ignored: the transaction's outcome is the COMMIT's).
 */
export async function withTransaction<T>(
  pool: Pool,
  work: (c: PoolClient) => Promise<T>,
  begin: string = 'BEGIN',
  whileCommitting?: () => void,
): Promise<T> {
  const c = await pool.connect();
  try {
    return await withTransactionOn(c, work, begin, whileCommitting);
  } finally {
    c.release();
  }
}

/**
 * The same transaction on a client the caller already holds and keeps (a session that also holds an advisory lock,
 * a search_path, or an idempotency claim): BEGIN, the work, COMMIT; on any error ROLLBACK (best effort) and
 * rethrow. The client is not released: what the session does before and after is the caller's.
 */
export async function withTransactionOn<C extends ClientBase, T>(
  c: C,
  work: (c: C) => Promise<T>,
  begin: string = 'BEGIN',
  whileCommitting?: () => void,
): Promise<T> {
  await c.query(begin);
  try {
    const out = await work(c);
    const committing = c.query('COMMIT');
    if (whileCommitting) {
      try {
        whileCommitting();
      } catch {
        // Its contract: it must not throw. The transaction's outcome is the COMMIT's, whatever this did.
      }
    }
    await committing;
    return out;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
