// One place that turns a database URL (+ optional schema) into a pg Pool. NUMERIC comes back as a string
// (pg's default), which callers turn into bigint: amounts never pass through a JS number.
import { Pool, PoolConfig } from 'pg';
import { quoteIdent } from './migrate';
import { resolveDatabaseUrl } from './local-server';

export interface DbOptions {
  url: string;
  /** Run every session with this search_path (tests give each suite its own schema). */
  schema?: string;
  max?: number;
}

export function createPool(opts: DbOptions): Pool {
  const config: PoolConfig = { connectionString: opts.url, max: opts.max ?? 10 };
  if (opts.schema) config.options = `-c search_path=${quoteIdent(opts.schema)}`;
  return new Pool(config);
}

/**
 * The pool every `oncepay` command uses: DATABASE_URL (or the embedded local server, started on demand) and the
 * schema named by ONCEPAY_DB_SCHEMA when set (tests run child processes inside their own schema).
 */
export function createPoolFromEnv(opts: { max?: number } = {}): Pool {
  return createPool({ url: resolveDatabaseUrl(), schema: process.env.ONCEPAY_DB_SCHEMA || undefined, max: opts.max });
}

/** Run `use` with a pool from the environment (as createPoolFromEnv) and close the pool afterwards, whatever happens. */
export async function withPoolFromEnv<T>(opts: { max?: number }, use: (db: Pool) => Promise<T>): Promise<T> {
  const db = createPoolFromEnv(opts);
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}
