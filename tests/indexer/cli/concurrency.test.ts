// Four real `oncepay ingest` processes on overlapping files at once: same totals as one, no deadlock, no error.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { expect } from 'chai';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { createLedger } from '../../../indexer/ledger';
import { jsonLines } from '../ledger/fixtures';
import { oncepay } from './run-cli';
import { expectedTotals, paymentDataset, USDC } from './dataset';
import { unbalancedInvoices } from './balances';

describe('indexer/cli: concurrent ingest', () => {
  let t: TestDb;
  let dir: string;
  before(async () => {
    t = await createTestDb('cli_concurrent');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-conc-'));
  });
  after(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await t.drop();
  });

  it('4 processes, overlapping inputs, small batches: every receipt once, every invoice exact', async () => {
    const n = 40;
    const ds = paymentDataset(n);
    const ledger = createLedger({ db: t.pool });
    for (const inv of ds.invoices)
      await ledger.createInvoice({
        id: inv.id,
        mint: USDC,
        expectedAmount: BigInt(inv.amount),
        depositAddress: inv.depositAddress,
      });
    // Each file holds 60 % of the transactions, starting at another offset (wrapping), half of them reversed,
    // so every transaction is in at least two files and the processes meet in both directions.
    const files = [0, 1, 2, 3].map((k) => {
      const len = ds.txs.length;
      const picked = Array.from(
        { length: Math.ceil(len * 0.6) },
        (_, j) => ds.txs[(k * Math.floor(len / 4) + j) % len],
      );
      const file = path.join(dir, `part-${k}.jsonl`);
      fs.writeFileSync(file, jsonLines(k % 2 ? picked.reverse() : picked));
      return file;
    });
    const sources = ['scanner', 'backfill', 'webhook', 'file'];
    const runs = await Promise.all(
      files.map((f, k) =>
        oncepay(['ingest', f, '--cluster', 'localnet', '--source', sources[k], '--batch-size', '4'], { env: t.env }),
      ),
    );
    for (const r of runs) {
      expect(r.code, r.stderr).to.equal(0);
      // A deadlock would be retried (and logged with its SQLSTATE): there must be none.
      expect(r.stderr).to.not.match(/deadlock|40P01|error/i);
    }
    const summaries = runs.map((r) => JSON.parse(r.stdout));
    const want = expectedTotals(n);
    expect(summaries.reduce((s, x) => s + x.inserted, 0)).to.equal(want.receipts);
    expect(summaries.reduce((s, x) => s + x.fulfilled.length, 0)).to.equal(want.invoicesPaid);

    const q = async (sql: string) => (await t.pool.query(sql)).rows;
    expect(await q(`SELECT count(*)::int AS n FROM receipts`)).to.deep.equal([{ n: want.receipts }]);
    const invoices = await q(`SELECT id, expected_amount::text AS e, credited_amount::text AS c, status FROM invoices`);
    expect(invoices.filter((i) => i.e !== i.c || i.status !== 'paid')).to.deep.equal([]);
    // Which receipt completes an invoice depends on arrival order; the money in exceptions does not.
    const exceptionMoney = (await q(`SELECT sum(amount)::text AS s FROM exceptions`))[0].s;
    expect(exceptionMoney).to.equal(String(100 * (n / 2) + 25));
    expect(await q(`SELECT count(*)::int AS n FROM outbox`)).to.deep.equal([{ n: want.invoicesPaid }]);
    expect(await unbalancedInvoices(t.pool)).to.deep.equal([]);
    const counts = await q(
      `SELECT sum(delivered)::int AS d, sum(inserted)::int AS i, sum(duplicates)::int AS u FROM receipt_delivery_counts`,
    );
    const delivered = summaries.reduce((s, x) => s + x.receipts, 0);
    expect(counts).to.deep.equal([{ d: delivered, i: want.receipts, u: delivered - want.receipts }]);
  });
});
