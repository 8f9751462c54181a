// Each suite gets its own schema in the real PostgreSQL server that `make test` started (DATABASE_URL),
// migrated from empty, and dropped afterwards.
import * as crypto from 'crypto';
import { Pool } from 'pg';
import { migrate, quoteIdent } from '../db/migrate';
import { createPool } from '../db/pool';
import { defaultDataDir, isRunning, resolveDatabaseUrl, stopLocalServer } from '../db/local-server';

export interface TestDb {
  url: string;
  schema: string;
  pool: Pool;
  /** DATABASE_URL-style settings for a child process that must see the same schema. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * Runs `fn`, which may start the embedded server (`resolveDatabaseUrl`, `createTestDb`), and leaves the server as it
 * found it: one that was not running, with no DATABASE_URL set, is stopped again when `fn` ends, however it ends. A
 * server started by someone else (`make test`, `oncepay db start`) stays up.
 */
export async function leavingServerAsFound<T>(fn: () => Promise<T>): Promise<T> {
  const startsServer = !process.env.DATABASE_URL && !isRunning(defaultDataDir());
  try {
    return await fn();
  } finally {
    if (startsServer) stopLocalServer();
  }
}

/** `url`: another server than the suite's (a fault test restarts a server of its own). */
export async function createTestDb(label: string, url = resolveDatabaseUrl()): Promise<TestDb> {
  const schema = `t_${label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30)}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = createPool({ url, max: 1 });
  await migrate(admin, { schema });
  await admin.end();
  const pool = createPool({ url, schema });
  return {
    url,
    schema,
    pool,
    env: { DATABASE_URL: url, ONCEPAY_DB_SCHEMA: schema },
    async drop() {
      await pool.end();
      const a = createPool({ url, max: 1 });
      await a.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
      await a.end();
    },
  };
}
