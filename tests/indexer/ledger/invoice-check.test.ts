// receipts.invoice_id names an invoice (migration 0012): the statement-level check that replaced the per-row
// foreign key keeps each of its promises, against the real PostgreSQL server.
import { expect } from 'chai';
import type { PoolClient } from 'pg';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { copyIn, receiptCopyText } from '../../../indexer/ledger/copy';
import { COPY_RECEIPTS } from '../../../indexer/ledger/queries';
import { addr, receipt, rejection, sig } from './fixtures';

const FK_VIOLATION = '23503';

function insertReceipt(db: TestDb['pool'] | PoolClient, signature: string, invoiceId: string | null) {
  return db.query(
    `INSERT INTO receipts (cluster, signature, ix_index, inner_index, program, kind, source, destination, amount,
                           invoice_id, first_source)
     VALUES ('localnet', $1, 0, -1, 'spl-token', 'transfer', 'SRC', 'DEST', 5, $2, 'scanner')`,
    [signature, invoiceId],
  );
}

describe('indexer/ledger invoice check (receipts.invoice_id → invoices)', () => {
  let t: TestDb;
  beforeEach(async () => {
    t = await createTestDb('invoice_check');
    for (const id of ['A', 'B'])
      await t.pool.query(
        `INSERT INTO invoices (id, mint, expected_amount, deposit_address) VALUES ($1, 'M', 100, $2)`,
        [id, addr(id)],
      );
  });
  afterEach(async () => t.drop());

  it('refuses an INSERT naming an invoice that is not there, and takes one naming an invoice or none', async () => {
    const e = await rejection(insertReceipt(t.pool, sig('missing'), 'NOPE'));
    expect(e.code).to.equal(FK_VIOLATION);
    expect(e.constraint).to.equal('receipts_invoice_id_check');
    expect(e.detail).to.equal('Key (invoice_id)=(NOPE) is not present in table "invoices".');
    await insertReceipt(t.pool, sig('to-a'), 'A');
    await insertReceipt(t.pool, sig('to-none'), null);
    const n = await t.pool.query(`SELECT count(*)::int AS n FROM receipts`);
    expect(n.rows[0].n).to.equal(2);
  });

  it('refuses a COPY of which one row names a missing invoice: none of its rows stays', async () => {
    const rs = [1, 2, 3].map((i) => receipt({ signature: sig(`copy-${i}`), destination: addr('A'), amount: 5n }));
    const c = await t.pool.connect();
    try {
      const e = await rejection(
        copyIn(c, COPY_RECEIPTS, receiptCopyText('localnet', 'scanner', rs, ['A', 'NOPE', 'B'])),
      );
      expect(e.code).to.equal(FK_VIOLATION);
      await copyIn(c, COPY_RECEIPTS, receiptCopyText('localnet', 'scanner', rs, ['A', null, 'B']));
    } finally {
      c.release();
    }
    const got = await t.pool.query(`SELECT invoice_id FROM receipts ORDER BY id`);
    expect(got.rows.map((r) => r.invoice_id)).to.deep.equal(['A', null, 'B']);
  });

  it('refuses an UPDATE of a receipt to a missing invoice; to another invoice is fine', async () => {
    await insertReceipt(t.pool, sig('moved'), 'A');
    const e = await rejection(t.pool.query(`UPDATE receipts SET invoice_id = 'NOPE'`));
    expect(e.code).to.equal(FK_VIOLATION);
    await t.pool.query(`UPDATE receipts SET invoice_id = 'B'`);
    expect((await t.pool.query(`SELECT invoice_id FROM receipts`)).rows[0].invoice_id).to.equal('B');
  });

  it('keeps an invoice a receipt names: no DELETE, no new id, no TRUNCATE without the receipts', async () => {
    await insertReceipt(t.pool, sig('keeps-a'), 'A');
    for (const sql of [
      `DELETE FROM invoices WHERE id = 'A'`,
      `UPDATE invoices SET id = 'A2' WHERE id = 'A'`,
      `TRUNCATE invoices CASCADE`,
    ]) {
      const e = await rejection(t.pool.query(sql));
      expect(e.code, sql).to.equal(FK_VIOLATION);
    }
    expect((await t.pool.query(`SELECT id FROM invoices ORDER BY id`)).rows.map((r) => r.id)).to.deep.equal(['A', 'B']);
    // An invoice no receipt names may go, or change its id; so may both tables at once.
    await t.pool.query(`UPDATE invoices SET id = 'B2' WHERE id = 'B'`);
    await t.pool.query(`DELETE FROM invoices WHERE id = 'B2'`);
    await t.pool.query(`TRUNCATE invoices, receipts CASCADE`);
  });

  it('a DELETE of an invoice waits for the transaction inserting a receipt that names it, then is refused', async () => {
    const writer = await t.pool.connect();
    const deleter = await t.pool.connect();
    try {
      await writer.query('BEGIN');
      await insertReceipt(writer, sig('in-flight'), 'A');
      const pid = (await deleter.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const deleting = rejection(deleter.query(`DELETE FROM invoices WHERE id = 'A'`));
      // The DELETE is blocked on the writer's KEY SHARE lock of invoice A (the receipt is not visible to it yet).
      for (let i = 0; ; i++) {
        const w = await t.pool.query(`SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1`, [pid]);
        if (w.rows[0]?.wait_event_type === 'Lock') break;
        if (i > 500) throw new Error('the DELETE never waited for the writer');
        await new Promise((r) => setTimeout(r, 10));
      }
      await writer.query('COMMIT');
      const e = await deleting;
      expect(e.code).to.equal(FK_VIOLATION);
    } finally {
      writer.release();
      deleter.release();
    }
    expect((await t.pool.query(`SELECT count(*)::int AS n FROM invoices WHERE id = 'A'`)).rows[0].n).to.equal(1);
  });
});
