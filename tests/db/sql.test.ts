import { expect } from 'chai';
import { arrayLiteral, exec, one, rows, withTransaction, withTransactionOn } from '../../db/sql';
import { TestDb, createTestDb } from '../../testkit/test-db';

describe('db/sql: the one SQL seam', () => {
  let db: TestDb;
  before(async () => {
    db = await createTestDb('sql_seam');
    await db.pool.query('CREATE TABLE seam (n int PRIMARY KEY)');
  });
  after(async () => db?.drop());
  const count = async () =>
    (await one<{ n: number }>(db.pool, { text: 'SELECT count(*)::int AS n FROM seam', values: [] }))!.n;

  it('rows / one / exec run a Query and say what it returned or touched', async () => {
    expect(
      await exec(db.pool, { text: 'INSERT INTO seam (n) SELECT unnest($1::int[])', values: [[1, 2, 3]] }),
    ).to.equal(3);
    expect(await rows(db.pool, { text: 'SELECT n FROM seam ORDER BY n', values: [] })).to.deep.equal([
      { n: 1 },
      { n: 2 },
      { n: 3 },
    ]);
    expect(await one(db.pool, { text: 'SELECT n FROM seam WHERE n = $1', values: [9] })).to.equal(null);
    await exec(db.pool, { text: 'DELETE FROM seam', values: [] });
  });

  it('arrayLiteral: PostgreSQL reads back every element as given, quotes, backslashes, braces and the word NULL included', async () => {
    const texts = [
      'plain',
      '',
      'NULL',
      'null',
      'a,b',
      '{x}',
      'say "hi"',
      'back\\slash\\',
      ' spaced ',
      'é🙂',
      '\\"',
      null,
    ];
    const got = await one<{ a: (string | null)[]; n: number }>(db.pool, {
      text: 'SELECT $1::text[] AS a, cardinality($1::text[]) AS n',
      values: [arrayLiteral(texts)],
    });
    expect(got).to.deep.equal({ a: texts, n: texts.length });
    const nums = await one<{ a: string[] }>(db.pool, {
      text: 'SELECT $1::int[]::text[] AS a',
      values: [arrayLiteral([0, -1, 2147483647, null])],
    });
    expect(nums!.a).to.deep.equal(['0', '-1', '2147483647', null]);
    expect(
      await one(db.pool, { text: 'SELECT cardinality($1::text[]) AS n', values: [arrayLiteral([])] }),
    ).to.deep.equal({ n: 0 });
  });

  it('withTransaction commits the work, or rolls all of it back and rethrows', async () => {
    const out = await withTransaction(db.pool, async (c) => {
      await c.query('INSERT INTO seam (n) VALUES (1)');
      return 'done';
    });
    expect(out).to.equal('done');
    const boom = new Error('boom');
    const seen = await withTransaction(db.pool, async (c) => {
      await c.query('INSERT INTO seam (n) VALUES (2)');
      throw boom;
    }).catch((e: unknown) => e);
    expect(seen).to.equal(boom);
    expect(await count()).to.equal(1);
    await db.pool.query('DELETE FROM seam');
  });

  it('withTransaction runs the BEGIN it is given (isolation level)', async () => {
    const level = await withTransaction(
      db.pool,
      async (c) => (await c.query('SHOW transaction_isolation')).rows[0].transaction_isolation,
      'BEGIN ISOLATION LEVEL SERIALIZABLE',
    );
    expect(level).to.equal('serializable');
  });

  it('withTransaction runs whileCommitting once the COMMIT is sent, before its answer; a throw there changes nothing', async () => {
    const events: string[] = [];
    const out = await withTransaction(
      db.pool,
      async (c) => {
        await c.query('INSERT INTO seam (n) VALUES (7)');
        events.push('work');
        return 'kept';
      },
      'BEGIN',
      () => {
        events.push('while committing');
        throw new Error('ignored: the outcome is the COMMIT’s');
      },
    ).then((x) => {
      events.push('committed');
      return x;
    });
    expect(out).to.equal('kept');
    expect(events).to.deep.equal(['work', 'while committing', 'committed']);
    expect(await count()).to.equal(1);
    // Not run for a transaction that rolls back.
    let ran = false;
    await withTransaction(
      db.pool,
      async () => {
        throw new Error('rolled back');
      },
      'BEGIN',
      () => {
        ran = true;
      },
    ).catch(() => undefined);
    expect(ran).to.equal(false);
    await db.pool.query('DELETE FROM seam');
  });

  it('withTransactionOn keeps the session it was given: its state before and after the transaction is the caller’s', async () => {
    const c = await db.pool.connect();
    try {
      await c.query('CREATE TEMP TABLE session_mark (x int)');
      const pid = (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const failed = await withTransactionOn(c, async (t) => {
        await t.query('INSERT INTO seam (n) VALUES (5)');
        throw new Error('no');
      }).catch((e: Error) => e.message);
      expect(failed).to.equal('no');
      expect((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid).to.equal(pid);
      // Not inside a transaction any more (the rollback ran), the temp table is still there, nothing was kept.
      expect((await c.query('SELECT count(*)::int AS n FROM session_mark')).rows[0].n).to.equal(0);
      expect(await count()).to.equal(0);
      await withTransactionOn(c, (t) => t.query('INSERT INTO seam (n) VALUES (6)'));
      expect(await count()).to.equal(1);
    } finally {
      c.release();
    }
  });
});
