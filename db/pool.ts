// One place that turns a database URL (+ optional schema) into a pg Pool. NUMERIC comes back as a string
// (pg's default), which callers turn into bigint: amounts never pass through a JS number.
import { Pool, PoolConfig } from 'pg';
import { quoteIdent } from './migrate';

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
