// One place that turns a database URL (+ optional schema) into a pg Pool. NUMERIC comes back as a string
// (pg's default), which callers turn into bigint: amounts never pass through a JS number.
//
// A pool made here survives the database going away: PostgreSQL ending a connection (restart, failover,
// pg_terminate_backend, an idle timeout in a proxy) makes pg emit 'error' on the pool (idle clients) or on the
// client itself (checked-out clients between two queries). Unhandled, that event ends the process; here it is
// logged, the dead client is dropped, and the next query connects again. Acquiring a connection gives up after
// `connectTimeoutMs`, so a dead database fails a request (→ 503, db/unavailable.ts) instead of hanging it.
//
// A libpq multi-host URL (`postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`, what pg_auto_failover
// prints) gets the host-list pool of db/host-list.ts, which keeps only connections to the writable server and so
// follows a failover; a plain one-host URL goes to node-postgres exactly as written.
import { Pool, PoolConfig } from 'pg';
import { isLibpqConnString, needsHostList, parseConnInfo } from './conninfo';
import { createHostListPool } from './host-list';
import { logger } from '../common/log';
import { quoteIdent } from './migrate';
import { resolveDatabaseUrl } from './local-server';

export interface DbOptions {
  url: string;
  /** Run every session with this search_path (tests give each suite its own schema). */
  schema?: string;
  max?: number;
  /**
   * PostgreSQL application_name of every session, so operators (and the fault tests) can find a command's
   * backends in pg_stat_activity. Default "oncepay".
   */
  applicationName?: string;
  /** Give up acquiring a connection after this long (default DEFAULT_CONNECT_TIMEOUT_MS, env ONCEPAY_DB_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

function connectTimeoutFromEnv(): number {
  const v = Number(process.env.ONCEPAY_DB_CONNECT_TIMEOUT_MS);
  return Number.isSafeInteger(v) && v > 0 ? v : DEFAULT_CONNECT_TIMEOUT_MS;
}

export function createPool(opts: DbOptions): Pool {
  const config: PoolConfig = {
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'oncepay',
    connectionTimeoutMillis: opts.connectTimeoutMs ?? connectTimeoutFromEnv(),
    // A half-open TCP connection (the server host vanished) is noticed instead of waited on forever.
    keepAlive: true,
  };
  if (opts.schema) config.options = `-c search_path=${quoteIdent(opts.schema)}`;
  const info = isLibpqConnString(opts.url) ? parseConnInfo(opts.url) : undefined;
  const pool =
    info && needsHostList(info)
      ? createHostListPool(info, config)
      : new Pool({ ...config, connectionString: opts.url });
  const log = logger('db');
  const lost = (err: Error) =>
    log.warn(
      { err: err.message, code: (err as { code?: string }).code, applicationName: config.application_name },
      'database connection lost',
    );
  // Idle clients: pg-pool removes the dead client and re-emits here.
  pool.on('error', lost);
  // Checked-out clients: pg-pool takes its own listener off while a client is lent out, so each client gets a
  // permanent one. The borrower's next query fails (and the released dead client is dropped by pg-pool).
  pool.on('connect', (client) => client.on('error', lost));
  return pool;
}

/**
 * The pool every `oncepay` command uses: DATABASE_URL (or the embedded local server, started on demand) and the
 * schema named by ONCEPAY_DB_SCHEMA when set (tests run child processes inside their own schema). `name` is the
 * command, e.g. "indexer-run": sessions are named "oncepay-<name>".
 */
export function createPoolFromEnv(opts: { max?: number; name?: string } = {}): Pool {
  return createPool({
    url: resolveDatabaseUrl(),
    schema: process.env.ONCEPAY_DB_SCHEMA || undefined,
    max: opts.max,
    applicationName: opts.name ? `oncepay-${opts.name}` : 'oncepay',
  });
}

/** Run `use` with a pool from the environment (as createPoolFromEnv) and close the pool afterwards, whatever happens. */
export async function withPoolFromEnv<T>(
  opts: { max?: number; name?: string },
  use: (db: Pool) => Promise<T>,
): Promise<T> {
  const db = createPoolFromEnv(opts);
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}
