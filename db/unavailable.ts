// Is this error "the database is away" (retry later) rather than "this request is wrong" (a bug or bad input)?
// Pure: one place decides, the HTTP servers answer 503 + Retry-After for it and the loops back off for it.
// Anything not listed here is not an outage: a constraint violation or a syntax error must never be retried blindly.

/** The stable code the HTTP servers answer with while the database is unreachable. */
export const DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE';
export const DATABASE_UNAVAILABLE_MESSAGE = 'the database is unreachable; retry after the Retry-After delay';
/** Seconds a client is told to wait before retrying (Retry-After) while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

/** Node network errors that mean the server (or the path to it) is gone. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

/**
 * SQLSTATEs of a server that is going away, not there yet, or ending this session: class 08 (connection
 * exception), 57P01 admin_shutdown (restart, pg_terminate_backend), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up or shutting down), 57P05 idle_session_timeout, 25P03
 * idle_in_transaction_session_timeout (the session is closed, its transaction rolled back), 53300
 * too_many_connections, 25006 read_only_sql_transaction (the server is a standby or was demoted by a failover: the
 * statement was refused before it ran, and the pool's next connection goes to the new primary, db/host-list.ts).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57P05', '25P03', '53300', '25006']);

function isUnavailableSqlState(code: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(code) || UNAVAILABLE_SQLSTATES.has(code);
}

/** Messages of node-postgres (pg, pg-pool) for a connection that died or never came. */
const PG_MESSAGES = [
  /^Connection terminated/, // "Connection terminated unexpectedly", "... due to connection timeout"
  /^timeout exceeded when trying to connect$/, // pg-pool's connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
  /^Query read timeout$/,
];

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** True when `e` (or what caused it) says the database cannot be reached right now. */
export function isDatabaseUnavailable(e: unknown, depth = 0): boolean {
  if (e === null || typeof e !== 'object' || depth > 4) return false;
  const x = e as ErrorLike;
  if (typeof x.code === 'string' && (NETWORK_CODES.has(x.code) || isUnavailableSqlState(x.code))) return true;
  if (typeof x.message === 'string' && PG_MESSAGES.some((re) => re.test(x.message as string))) return true;
  // AggregateError (a connect to several addresses) and wrapped causes.
  if (Array.isArray(x.errors) && x.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return x.cause !== undefined && isDatabaseUnavailable(x.cause, depth + 1);
}
