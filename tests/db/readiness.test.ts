// /readyz's decision (pure) and the probe against the real server: reachable + every known migration applied.
import { expect } from 'chai';
import { answerHealth } from '../../db/health-http';
import { loadMigrations, quoteIdent } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { checkReadiness, readinessDecision } from '../../db/readiness';
import { resolveDatabaseUrl } from '../../db/local-server';
import { createTestDb } from '../../testkit/test-db';

describe('db/readiness', () => {
  describe('readinessDecision (pure)', () => {
    it('ready when every known migration is applied; a newer schema (more applied) is fine', () => {
      expect(readinessDecision({ kind: 'applied', versions: [1, 50, 100] }, [1, 50, 100])).to.deep.equal({
        ready: true,
      });
      expect(readinessDecision({ kind: 'applied', versions: [1, 50, 100, 120] }, [1, 50, 100])).to.deep.equal({
        ready: true,
      });
    });
    it('not ready with the pending versions when some are missing, or when nothing was ever migrated', () => {
      const r = readinessDecision({ kind: 'applied', versions: [1, 50] }, [1, 50, 100, 110]);
      expect(r).to.include({ ready: false, code: 'MIGRATIONS_PENDING' });
      expect((r as { pending: number[] }).pending).to.deep.equal([100, 110]);
      const none = readinessDecision({ kind: 'no_migrations_table' }, [1, 50]);
      expect((none as { pending: number[] }).pending).to.deep.equal([1, 50]);
    });
    it('not ready, DATABASE_UNAVAILABLE, when the database did not answer', () => {
      const r = readinessDecision({ kind: 'unreachable', error: 'connect ECONNREFUSED' }, [1]);
      expect(r).to.include({ ready: false, code: 'DATABASE_UNAVAILABLE' });
    });
  });

  describe('against the real server', () => {
    it('a migrated schema is ready; an empty one is not (503, the pending list, Retry-After)', async () => {
      const db = await createTestDb('readiness');
      const url = resolveDatabaseUrl();
      const empty = `t_readiness_empty_${process.pid}`;
      const admin = createPool({ url, max: 1 });
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(empty)}`);
      const emptyPool = createPool({ url, schema: empty, max: 1 });
      try {
        expect(await checkReadiness(db.pool)).to.deep.equal({ ready: true });
        expect((await answerHealth('/readyz', db.pool)).status).to.equal(200);
        const a = await answerHealth('/readyz', emptyPool);
        expect(a.status).to.equal(503);
        expect(a.headers['retry-after']).to.equal('1');
        expect(a.body).to.include({ code: 'MIGRATIONS_PENDING', ready: false });
        expect(a.body.pending).to.deep.equal(loadMigrations().map((m) => m.version));
      } finally {
        await emptyPool.end();
        await admin.query(`DROP SCHEMA IF EXISTS ${quoteIdent(empty)} CASCADE`);
        await admin.end();
        await db.drop();
      }
    });

    it('an unreachable server: /readyz 503 DATABASE_UNAVAILABLE, /healthz still 200', async () => {
      // Port 1 on loopback: nothing listens there, the connect is refused at once.
      const dead = createPool({ url: 'postgres://postgres@127.0.0.1:1/postgres', max: 1, connectTimeoutMs: 2000 });
      try {
        const r = await answerHealth('/readyz', dead);
        expect(r.status).to.equal(503);
        expect(r.body).to.include({ code: 'DATABASE_UNAVAILABLE', ready: false });
        expect((await answerHealth('/healthz', dead)).status).to.equal(200);
      } finally {
        await dead.end();
      }
    });
  });
});
