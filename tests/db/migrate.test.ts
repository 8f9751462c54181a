import { expect } from 'chai';
import { createPool } from '../../db/pool';
import { loadMigrations, migrate, quoteIdent } from '../../db/migrate';
import { resolveDatabaseUrl } from '../../db/local-server';

describe('db/migrate', () => {
  const schema = `t_migrate_${process.pid}`;
  const url = resolveDatabaseUrl();
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

  it('runs against a real PostgreSQL server', async () => {
    const pool = createPool({ url, max: 1 });
    const { rows } = await pool.query('SHOW server_version_num');
    await pool.end();
    expect(Number(rows[0].server_version_num)).to.be.greaterThan(130000);
  });
});
