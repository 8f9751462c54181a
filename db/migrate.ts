// Applies migrations/NNNN_<what>.sql in order, each in its own transaction together with its row in
// schema_migrations, under an advisory lock so two processes starting at once do not race.
// An applied file is never edited: its checksum is recorded and a mismatch is an error.
import * as fs from 'fs';
import * as path from 'path';
import * as crypto from 'crypto';
import { Client, Pool, PoolClient } from 'pg';
import { projectRoot } from '../common/project-root';
import { withTransactionOn } from './sql';
import { DB_CODES, OncepayError } from '../common/errors';

export const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;
// Any constant works; it only has to be the same for every oncepay process.
const MIGRATION_LOCK_KEY = 0x6f6e6365; // "once"

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export function migrationsDir(): string {
  return path.join(projectRoot(), 'migrations');
}

export function loadMigrations(dir = migrationsDir()): Migration[] {
  const files = fs
    .readdirSync(dir)
    .filter((f) => MIGRATION_FILE.test(f))
    .sort();
  const seen = new Set<number>();
  return files.map((name) => {
    const version = Number(MIGRATION_FILE.exec(name)![1]);
    if (seen.has(version)) throw new OncepayError(DB_CODES.MIGRATION_DUPLICATE_VERSION, `${version} (${name})`);
    seen.add(version);
    const sql = fs.readFileSync(path.join(dir, name), 'utf8');
    return { version, name, sql, checksum: crypto.createHash('sha256').update(sql).digest('hex') };
  });
}

type Queryable = Pool | PoolClient | Client;

/**
 * Apply every pending migration. `schema` (optional) runs them inside that schema (created if missing),
 * which is how tests isolate themselves. Returns the names applied by this call.
 */
export async function migrate(db: Queryable, opts: { schema?: string; dir?: string } = {}): Promise<string[]> {
  const ownClient = db instanceof Pool ? await db.connect() : undefined;
  const client: PoolClient | Client = ownClient ?? (db as PoolClient | Client);
  const release = () => ownClient?.release();
  const applied: string[] = [];
  try {
    if (opts.schema) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(opts.schema)}`);
      await client.query(`SET search_path TO ${quoteIdent(opts.schema)}`);
    }
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
        'SELECT version, name, checksum FROM schema_migrations',
      );
      const done = new Map(rows.map((r) => [r.version, r]));
      for (const m of loadMigrations(opts.dir)) {
        const prior = done.get(m.version);
        if (prior) {
          if (prior.checksum !== m.checksum) {
            throw new OncepayError(DB_CODES.MIGRATION_EDITED, `${m.name} changed after it was applied`);
          }
          continue;
        }
        // On this client: it holds the advisory lock and the search_path.
        await withTransactionOn(client, async (c) => {
          await c.query(m.sql);
          await c.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            m.checksum,
          ]);
        }).catch((e: Error) => {
          throw new OncepayError(DB_CODES.MIGRATION_FAILED, `${m.name}: ${e.message}`, {}, { cause: e });
        });
        applied.push(m.name);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
    if (opts.schema) await client.query('RESET search_path');
  } finally {
    release();
  }
  return applied;
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new OncepayError(DB_CODES.INVALID_IDENTIFIER, name);
  return `"${name}"`;
}
