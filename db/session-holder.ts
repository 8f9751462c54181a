// A row held by a database session, for as long as that session lives: the session is named by (pid, backend_start)
// — a pid alone is reused after a restart — and when pg_stat_activity no longer shows it (its process died, its
// connection was terminated, the server restarted) the row is free at once, with no lease to wait out. Used by the
// merchant API's in-flight Idempotency-Keys (app/api/queries.ts) and the webhook's leased hints
// (indexer/source/queries.ts). SQL fragments only.

/** SQL: this session, as pg_stat_activity names it (a relation of one row: pid, backend_start). */
export const THIS_SESSION = `(SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())`;

/**
 * SQL condition: the session a row names in `pidColumn` / `startedColumn` is gone. When this role may not read
 * another role's backend_start (NULL), a live pid counts as alive: a row is never taken from a living holder.
 */
export function sessionGone(pidColumn: string, startedColumn: string): string {
  return `NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                       WHERE a.pid = ${pidColumn} AND (a.backend_start IS NULL OR a.backend_start = ${startedColumn}))`;
}
