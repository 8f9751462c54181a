// The one claim statement of every queue (the outbox, the webhook hints, the payouts): a queue is a business table
// whose rows are its jobs, and a claim is ONE statement that picks due rows with FOR UPDATE SKIP LOCKED and marks
// them held in the same UPDATE … RETURNING, as pg-boss's fetchNextJob does. Workers claim side by side without
// waiting on or double-claiming a row; a claim that dies with its worker is undone by the hold's own end (a lease
// that runs out, a session that is gone), never by a sweep. Pure: this builds SQL text, db/sql runs it.

/** What a queue's claim reads and writes, as SQL fragments of its own table (values as $n of the caller's Query). */
export interface ClaimSpec {
  /** The business table and its alias in the statement (`outbox o`). */
  table: string;
  alias: string;
  /** CTEs the pick reads (`name AS (…)`), before it: a ranking, the advisory locks held now, a setting. */
  with?: string[];
  /** The due rows: FROM (default: the table under its alias), WHERE, ORDER BY and LIMIT (each optional but WHERE). */
  due: { from?: string; where: string; orderBy?: string; limit?: string };
  /** Columns of the pick besides the row's id (`r.rank`), readable as `picked.<column>` in `set` and `returning`. */
  pick?: string[];
  /** What a claim writes on each picked row (`attempts = o.attempts + 1`, leaseUntil(…)): its hold and its count. */
  set: string[];
  /** What the claiming UPDATE reads besides `picked`: a join on it or more relations (`, no_flush_wait`). */
  using?: string;
  returning: string;
  /**
   * A final SELECT over the claimed rows (then the UPDATE is the CTE `claimed`): e.g. to answer one row, all NULL,
   * when nothing was due, or to do a second thing in the same statement.
   */
  select?: string;
}

/**
 * The claim: `WITH …, picked AS (SELECT id … FOR UPDATE OF <alias> SKIP LOCKED) UPDATE <table> SET <hold and count>
 * FROM picked WHERE id = picked.id RETURNING …`. The row lock is taken on the table itself (`OF <alias>`), so a
 * pick that joins other relations locks only the queue's rows.
 */
export function claimStatement(s: ClaimSpec): string {
  const a = s.alias;
  const pickCols = [`${a}.id`, ...(s.pick ?? [])].join(', ');
  const pick = [
    `SELECT ${pickCols} FROM ${s.due.from ?? `${s.table} ${a}`}`,
    `WHERE (${s.due.where})`,
    s.due.orderBy ? `ORDER BY ${s.due.orderBy}` : '',
    s.due.limit ? `LIMIT ${s.due.limit}` : '',
    `FOR UPDATE OF ${a} SKIP LOCKED`,
  ]
    .filter(Boolean)
    .join(' ');
  const update =
    `UPDATE ${s.table} ${a} SET ${s.set.join(', ')} FROM picked${s.using ?? ''}` +
    ` WHERE ${a}.id = picked.id RETURNING ${s.returning}`;
  const ctes = [...(s.with ?? []), `picked AS (${pick})`];
  return s.select
    ? `WITH ${[...ctes, `claimed AS (${update})`].join(',\n')}\n${s.select}`
    : `WITH ${ctes.join(',\n')}\n${update}`;
}

/** SQL: `column = now() + ms` (the lease's end), `ms` an SQL expression in milliseconds (`$2`). */
export function leaseUntil(column: string, ms: string): string {
  return `${column} = now() + make_interval(secs => ${ms}::float8 / 1000)`;
}

/**
 * SQL: the wait before retry `retry` (an SQL integer expression, 1 for the first retry; below 1: none) as an
 * interval: common/backoff.ts's rule written in SQL — min(base·2^(retry−1), cap), half fixed and half random —
 * with `baseMs` and `capMs` SQL expressions in milliseconds. tests/db/queue holds it to backoffDelay's bounds.
 */
export function backoffInterval(retry: string, baseMs: string, capMs: string): string {
  return `make_interval(secs => CASE WHEN ${retry} >= 1
            THEN LEAST(${capMs}::float8, ${baseMs}::float8 * 2 ^ LEAST(${retry} - 1, 31)) * (0.5 + random() * 0.5) / 1000
            ELSE 0 END)`;
}

/**
 * SQL: the state a failed attempt leaves a row in: `dead` (the dead letter, kept for an operator's replay) once
 * `attempts` has reached `maxAttempts`, else `retry` (due again after its backoff). States are SQL literals.
 */
export function deadOrRetry(attempts: string, maxAttempts: string, dead: string, retry: string): string {
  return `CASE WHEN ${attempts} >= ${maxAttempts} THEN ${dead} ELSE ${retry} END`;
}
