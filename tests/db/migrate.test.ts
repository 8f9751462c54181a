import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { expect } from 'chai';
import { createPool } from '../../db/pool';
import { loadMigrations, migrate, quoteIdent } from '../../db/migrate';
import { resolveDatabaseUrl } from '../../db/local-server';

describe('db/migrate', () => {
  const schema = `t_migrate_${process.pid}`;
  // Resolved in a hook, not while the file loads: `mocha --dry-run` (which lists tests) must not start a server.
  let url: string;
  before(() => {
    url = resolveDatabaseUrl();
  });
  after(async () => {
    const p = createPool({ url, max: 1 });
    await p.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
    await p.end();
  });

  it('applies every migration from empty, then again as a no-op', async () => {
    const pool = createPool({ url, max: 1 });
    try {
      const first = await migrate(pool, { schema });
      expect(first).to.deep.equal(loadMigrations().map((m) => m.name));
      const second = await migrate(pool, { schema });
      expect(second).to.deep.equal([]);
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${quoteIdent(schema)}.schema_migrations`);
      expect(rows[0].n).to.equal(first.length);
    } finally {
      await pool.end();
    }
  });

  it('a failing migration leaves nothing behind: its statements and its schema_migrations row roll back together', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-migrate-'));
    const broken = `${schema}_broken`;
    fs.writeFileSync(path.join(dir, '0001_first.sql'), 'CREATE TABLE first_t (x int);');
    fs.writeFileSync(path.join(dir, '0002_broken.sql'), 'CREATE TABLE second_t (x int); SELECT 1/0;');
    const pool = createPool({ url, max: 1 });
    try {
      const e = await migrate(pool, { schema: broken, dir }).catch((x: Error) => x);
      expect(String(e)).to.match(/ONCEPAY__DB__MIGRATION_FAILED: 0002_broken\.sql: division by zero/);
      const { rows } = await pool.query(
        `SELECT (SELECT array_agg(version ORDER BY version) FROM ${quoteIdent(broken)}.schema_migrations) AS versions,
                to_regclass('${broken}.first_t') IS NOT NULL AS first, to_regclass('${broken}.second_t') IS NOT NULL AS second`,
      );
      expect(rows[0]).to.deep.equal({ versions: [1], first: true, second: false });
      // The session is usable again (no transaction left open) and the lock was given back: a fixed file applies.
      fs.writeFileSync(path.join(dir, '0002_broken.sql'), 'CREATE TABLE second_t (x int);');
      expect(await migrate(pool, { schema: broken, dir })).to.deep.equal(['0002_broken.sql']);
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(broken)} CASCADE`);
      await pool.end();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs against a real PostgreSQL server', async () => {
    const pool = createPool({ url, max: 1 });
    const { rows } = await pool.query('SHOW server_version_num');
    await pool.end();
    expect(Number(rows[0].server_version_num)).to.be.greaterThan(130000);
  });
});
