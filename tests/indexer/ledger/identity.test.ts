// A receipt's identity (cluster, signature, ix_index, inner_index) is unique in `receipts` (migrations 0001, 0011,
// 0013): what is equal, what is not, and that the ledger's lookups by identity still probe its index now that the
// index leads with the signature. Against the real PostgreSQL server.
import { expect } from 'chai';
import type { PoolClient } from 'pg';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { selectReceiptIds, selectUnknownReceipts } from '../../../indexer/ledger/queries';
import { settleProvisionalReceipts } from '../../../indexer/source/queries';
import { rejection, sig } from './fixtures';

const UNIQUE_VIOLATION = '23505';

function insertReceipt(db: TestDb['pool'] | PoolClient, cluster: string, signature: string, ix: number, inner: number) {
  return db.query(
    `INSERT INTO receipts (cluster, signature, ix_index, inner_index, program, kind, source, destination, amount,
                           first_source)
     VALUES ($1, $2, $3, $4, 'spl-token', 'transfer', 'SRC', 'DEST', 5, 'scanner')`,
    [cluster, signature, ix, inner],
  );
}

/** The plan of a query as text, with sequential scans off: shows whether an index can serve it at all. */
async function plan(t: TestDb, q: { text: string; values: unknown[] }): Promise<string> {
  const c = await t.pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SET LOCAL enable_seqscan = off');
    const { rows } = await c.query(`EXPLAIN (COSTS OFF) ${q.text}`, q.values);
    return rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
  } finally {
    await c.query('ROLLBACK');
    c.release();
  }
}

describe('indexer/ledger receipt identity (UNIQUE, signature first)', () => {
  let t: TestDb;
  beforeEach(async () => {
    t = await createTestDb('receipt_identity');
  });
  afterEach(async () => t.drop());

  it('is one UNIQUE constraint over the four identity columns, signature first, bytewise', async () => {
    const { rows } = await t.pool.query(
      `SELECT c.contype, a.attname, coll.collname
         FROM pg_constraint c
         JOIN pg_index i ON i.indexrelid = c.conindid
         CROSS JOIN LATERAL unnest(i.indkey::int2[], i.indcollation::oid[]) WITH ORDINALITY AS k(attnum, coll_oid, pos)
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
         LEFT JOIN pg_collation coll ON coll.oid = k.coll_oid
        WHERE c.conname = 'receipts_identity' AND c.conrelid = 'receipts'::regclass
        ORDER BY k.pos`,
    );
    expect(rows.map((r) => r.contype)).to.deep.equal(['u', 'u', 'u', 'u']);
    expect(rows.map((r) => r.attname)).to.deep.equal(['signature', 'ix_index', 'inner_index', 'cluster']);
    // The index compares the signature and the cluster bytewise (0011); the integers have no collation.
    expect(rows.map((r) => r.collname)).to.deep.equal(['C', null, null, 'C']);
  });

  it('refuses a second row with the same identity, and takes rows that differ in any one part', async () => {
    await insertReceipt(t.pool, 'localnet', sig('a'), 0, -1);
    const e = await rejection(insertReceipt(t.pool, 'localnet', sig('a'), 0, -1));
    expect(e.code).to.equal(UNIQUE_VIOLATION);
    expect(e.constraint).to.equal('receipts_identity');
    await insertReceipt(t.pool, 'devnet', sig('a'), 0, -1); // another cluster
    await insertReceipt(t.pool, 'localnet', sig('b'), 0, -1); // another signature
    await insertReceipt(t.pool, 'localnet', sig('a'), 1, -1); // another instruction
    await insertReceipt(t.pool, 'localnet', sig('a'), 0, 0); // an inner instruction of it
    const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM receipts`);
    expect(rows[0].n).to.equal(5);
  });

  it('ON CONFLICT on the four columns, in the order the code names them, still finds the constraint', async () => {
    await insertReceipt(t.pool, 'localnet', sig('a'), 0, -1);
    const r = await t.pool.query(
      `INSERT INTO receipts (cluster, signature, ix_index, inner_index, program, kind, source, destination, amount,
                             first_source)
       VALUES ('localnet', $1, 0, -1, 'spl-token', 'transfer', 'SRC', 'DEST', 5, 'scanner')
       ON CONFLICT (cluster, signature, ix_index, inner_index) DO NOTHING`,
      [sig('a')],
    );
    expect(r.rowCount).to.equal(0);
  });

  it('the ledger probes and the provisional settlement look receipts up through the identity index', async () => {
    for (let i = 0; i < 50; i++) await insertReceipt(t.pool, 'localnet', sig(`r${i}`), 0, -1);
    await t.pool.query('ANALYZE receipts');
    const ids = { signatures: [sig('r1'), sig('x')], ixIndexes: [0, 0], innerIndexes: [-1, -1] };
    for (const q of [
      selectReceiptIds('localnet', ids),
      selectUnknownReceipts('localnet', ids),
      settleProvisionalReceipts('localnet', 10),
    ]) {
      const p = await plan(t, q);
      expect(p, p).to.match(/Index (Only )?Scan using receipts_identity on receipts r/);
      expect(p, p).to.not.match(/Seq Scan on receipts/);
    }
    const found = await t.pool.query(selectReceiptIds('localnet', ids));
    expect(found.rows.map((r) => r.ord)).to.deep.equal([1]);
  });
});
