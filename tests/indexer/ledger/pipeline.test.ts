// ledger.pipeline(): batches of one stream applied in the order given, one transaction each, the next prepared
// while the one before commits; a failed batch takes every batch given after it down with it, unapplied. Against
// the real PostgreSQL server.
import { expect } from 'chai';
import pino from 'pino';
import { Writable } from 'stream';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { type BatchPipeline, createLedger, type Ledger } from '../../../indexer/ledger';
import { LEDGER_CODES } from '../../../common/errors/codes';
import type { Receipt } from '../../../indexer/decode/receipt';
import { ingestReceipts } from '../../../indexer/source/file';
import { addr, receipt, settled, sig } from './fixtures';

const MINT = addr('mint-usdc');

/** `n` receipts of `amount` each to `to`, in slot `slot`. */
function payments(label: string, n: number, to: string, amount: bigint, slot: bigint): Receipt[] {
  return Array.from({ length: n }, (_, i) =>
    receipt({ signature: sig(`${label}-${i}`), destination: addr(to), amount, slot }),
  );
}

/** A file-source batch of `n` payments of 1 to `to` in `slot` (and `extra`), checkpointed at that slot. */
function batchesTo(pipe: BatchPipeline, to: string, n: number) {
  return (label: string, slot: bigint, extra: Receipt[] = []) =>
    pipe.apply({
      cluster: 'localnet',
      source: 'file',
      receipts: [...payments(label, n, to, 1n, slot), ...extra],
      checkpoint: { slot },
    });
}

/** A receipt the database refuses (a trigger of this test): its batch fails in PostgreSQL, after validation. */
async function refuseBoom(t: TestDb): Promise<void> {
  await t.pool.query(`
    CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.signature = '${sig('boom')}' THEN RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'P0001'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_boom BEFORE INSERT ON receipts FOR EACH ROW EXECUTE FUNCTION refuse_boom();`);
}

describe('indexer/ledger pipeline (batches in order, the next prepared while one commits)', () => {
  let t: TestDb;
  let ledger: Ledger;
  beforeEach(async () => {
    t = await createTestDb('ledger_pipeline');
    ledger = createLedger({ db: t.pool, log: pino({ level: 'silent' }) });
    await ledger.createInvoice({ id: 'A', mint: MINT, expectedAmount: 100n, depositAddress: addr('dep-a') });
    await ledger.createInvoice({ id: 'B', mint: MINT, expectedAmount: 1_000n, depositAddress: addr('dep-b') });
  });
  afterEach(async () => t.drop());

  it('applies batches given before the last one committed, in order, with what each one credited', async () => {
    const pipe = ledger.pipeline();
    const given = [
      pipe.apply({
        cluster: 'localnet',
        source: 'file',
        receipts: payments('one', 3, 'dep-a', 20n, 10n),
        checkpoint: { slot: 10 },
      }),
      pipe.apply({
        cluster: 'localnet',
        source: 'file',
        receipts: payments('two', 3, 'dep-a', 20n, 11n),
        checkpoint: { slot: 11 },
      }),
      pipe.apply({
        cluster: 'localnet',
        source: 'file',
        receipts: [...payments('three', 2, 'dep-b', 7n, 12n), ...payments('one', 1, 'dep-a', 20n, 10n)],
        checkpoint: { slot: 12 },
      }),
    ];
    const [one, two, three] = await Promise.all(given);
    expect(one.credited).to.deep.equal([{ invoiceId: 'A', amount: 60n }]);
    // The second batch completes A (40 of its 60) and its last payment came after: it saw the first one's credit.
    expect(two.credited).to.deep.equal([{ invoiceId: 'A', amount: 40n }]);
    expect(two.fulfilled).to.deep.equal(['A']);
    expect(two.exceptions.map((e) => [e.kind, e.amount])).to.deep.equal([['late_payment', 20n]]);
    expect(three.inserted).to.equal(2);
    expect(three.duplicates).to.equal(1);
    expect(three.credited).to.deep.equal([{ invoiceId: 'B', amount: 14n }]);
    expect((await ledger.getInvoice('A'))!.creditedAmount).to.equal(100n);
    expect(await ledger.getCheckpoint('localnet', 'file')).to.equal(12n);
    // One transaction after another: each batch's rows were written by a later transaction than the one before.
    const xids = await t.pool.query(
      `SELECT slot, max(xmin::text::bigint) AS x FROM receipts GROUP BY slot ORDER BY slot`,
    );
    const order = xids.rows.map((r) => Number(r.x));
    expect(order).to.have.length(3);
    expect(order[0]).to.be.below(order[1]);
    expect(order[1]).to.be.below(order[2]);
  });

  it('prepares the next batch while the one before commits (its rejected receipt is logged before that commit ends)', async () => {
    const events: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        const line = JSON.parse(chunk.toString()) as { code?: string; index?: number };
        if (line.code === LEDGER_CODES.INVALID_RECEIPT) events.push(`batch 2 validated (receipt ${line.index})`);
        done();
      },
    });
    const l = createLedger({ db: t.pool, log: pino({ level: 'error' }, sink) });
    const bad = { ...payments('bad', 1, 'dep-b', 1n, 21n)[0], amount: -1n } as unknown as Receipt;
    const pipe = l.pipeline();
    const first = pipe.apply({ cluster: 'localnet', source: 'file', receipts: payments('p1', 50, 'dep-b', 1n, 20n) });
    const second = pipe.apply({
      cluster: 'localnet',
      source: 'file',
      receipts: [...payments('p2', 5, 'dep-b', 1n, 21n), bad],
    });
    await first.then(() => events.push('batch 1 committed'));
    const r2 = await second;
    await new Promise((resolve) => setImmediate(resolve)); // pino writes asynchronously
    expect(r2.rejected.map((x) => x.index)).to.deep.equal([5]);
    expect(r2.inserted).to.equal(5);
    expect(events).to.deep.equal(['batch 2 validated (receipt 5)', 'batch 1 committed']);
  });

  it('a failed batch takes down the batches given after it, unapplied; the checkpoint stays at the last commit', async () => {
    // A receipt the database refuses (a trigger of this test): its batch fails in PostgreSQL, after validation.
    await refuseBoom(t);
    const pipe = ledger.pipeline();
    const batch = batchesTo(pipe, 'dep-b', 40);
    const outcomes = await Promise.all([
      settled(batch('ok', 30n)),
      settled(
        batch('fails', 31n, [receipt({ signature: sig('boom'), destination: addr('dep-b'), amount: 1n, slot: 31n })]),
      ),
      settled(batch('after', 32n)),
    ]);
    expect(outcomes[0].ok).to.equal(true);
    expect(outcomes[1].ok).to.equal(false);
    expect((outcomes[1] as { error: { message: string } }).error.message).to.contain('refused by the test');
    expect(outcomes[2].ok).to.equal(false);
    expect((outcomes[2] as { error: { code: string } }).error.code).to.equal(LEDGER_CODES.PIPELINE_BROKEN);
    // And every batch given later, too: the pipeline stays broken.
    const later = await settled(batch('later', 33n));
    expect((later as { error: { code: string } }).error.code).to.equal(LEDGER_CODES.PIPELINE_BROKEN);
    const kept = await t.pool.query(`SELECT min(slot) AS lo, max(slot) AS hi, count(*)::int AS n FROM receipts`);
    expect(kept.rows[0]).to.deep.equal({ lo: '30', hi: '30', n: 40 });
    expect((await ledger.getInvoice('B'))!.creditedAmount).to.equal(40n);
    expect(await ledger.getCheckpoint('localnet', 'file')).to.equal(30n);
    // A new pipeline starts again from there.
    await t.pool.query(`DROP TRIGGER refuse_boom ON receipts`);
    const again = await ledger.pipeline().apply({
      cluster: 'localnet',
      source: 'file',
      receipts: payments('after', 40, 'dep-b', 1n, 32n),
      checkpoint: { slot: 32 },
    });
    expect(again.inserted).to.equal(40);
    expect(await ledger.getCheckpoint('localnet', 'file')).to.equal(32n);
  });

  it('refuses a malformed batch at once, without breaking the pipeline', async () => {
    const pipe = ledger.pipeline();
    const bad = await settled(pipe.apply({ cluster: '', source: 'file', receipts: [] }));
    expect((bad as { error: { code: string } }).error.code).to.equal(LEDGER_CODES.INVALID_CLUSTER);
    const ok = await pipe.apply({ cluster: 'localnet', source: 'file', receipts: payments('x', 2, 'dep-b', 3n, 40n) });
    expect(ok.credited).to.deep.equal([{ invoiceId: 'B', amount: 6n }]);
  });

  it('ingest (the file source, pipelined) ends at the first failed batch with its own error; the batches before it stay', async () => {
    await refuseBoom(t);
    const receipts = [
      ...payments('i1', 10, 'dep-b', 2n, 50n),
      ...payments('i2', 10, 'dep-b', 2n, 51n),
      receipt({ signature: sig('boom'), destination: addr('dep-b'), amount: 2n, slot: 52n }),
      ...payments('i3', 9, 'dep-b', 2n, 52n),
      ...payments('i4', 10, 'dep-b', 2n, 53n),
    ];
    const run = await settled(
      ingestReceipts(
        ledger,
        { transactions: 0, receipts, problems: [] },
        { cluster: 'localnet', source: 'file', batchSize: 10 },
      ),
    );
    expect(run.ok).to.equal(false);
    expect((run as { error: { message: string } }).error.message).to.contain('refused by the test');
    const kept = await t.pool.query(`SELECT count(*)::int AS n, max(slot) AS hi FROM receipts`);
    expect(kept.rows[0]).to.deep.equal({ n: 20, hi: '51' });
    expect((await ledger.getInvoice('B'))!.creditedAmount).to.equal(40n);
    expect(await ledger.getCheckpoint('localnet', 'file')).to.equal(51n);
  });

  it('begins the next batch while the one before commits: its invoice lock waits inside PostgreSQL for that commit', async () => {
    // The first batch's COMMIT is slowed by a deferred trigger of this test (0.6 s), so the next one's lock can be seen
    // waiting on the invoice row the first one holds.
    await t.pool.query(`
      CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.signature = '${sig('slow')}' THEN PERFORM pg_sleep(0.6); END IF;
        RETURN NULL;
      END $$;
      CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON receipts DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION slow_commit();`);
    const pipe = ledger.pipeline();
    // A batch all new (64 receipts or more) first: the path's batches after it skip the probe and lock first.
    await pipe.apply({ cluster: 'localnet', source: 'file', receipts: payments('s0', 70, 'dep-a', 1n, 59n) });
    const slow = receipt({ signature: sig('slow'), destination: addr('dep-b'), amount: 1n, slot: 60n });
    const first = pipe.apply({
      cluster: 'localnet',
      source: 'file',
      receipts: [...payments('s1', 40, 'dep-b', 1n, 60n), slow],
    });
    const second = pipe.apply({ cluster: 'localnet', source: 'file', receipts: payments('s2', 40, 'dep-b', 1n, 61n) });
    let committed = false;
    void first.then(() => (committed = true));
    let sawWaitingLock = false;
    while (!committed) {
      const { rows } = await t.pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM invoices%FOR UPDATE%'`,
      );
      if (rows[0].n > 0) sawWaitingLock = true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [one, two] = await Promise.all([first, second]);
    expect(sawWaitingLock).to.equal(true);
    expect(one.credited).to.deep.equal([{ invoiceId: 'B', amount: 41n }]);
    // The second saw the first's credit (the lock it waited for gave it the committed row).
    expect(two.credited).to.deep.equal([{ invoiceId: 'B', amount: 40n }]);
    expect((await ledger.getInvoice('B'))!.creditedAmount).to.equal(81n);
  });

  it('a batch whose COMMIT fails takes down the next one, begun while it committed: rolled back, nothing of it kept', async () => {
    // The refusal is deferred to COMMIT (a constraint trigger of this test): the next batch has begun by then.
    await t.pool.query(`
      CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.signature = '${sig('late-boom')}' THEN RAISE EXCEPTION 'refused at commit' USING ERRCODE = 'P0001'; END IF;
        RETURN NULL;
      END $$;
      CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON receipts DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`);
    const pipe = ledger.pipeline();
    // 70 receipts each: after the first, the path skips the probe, so the third batch, begun while the second
    // commits, has its invoice lock out (waiting for the second) when that COMMIT fails.
    const batch = batchesTo(pipe, 'dep-b', 70);
    const late = receipt({ signature: sig('late-boom'), destination: addr('dep-b'), amount: 1n, slot: 71n });
    const outcomes = await Promise.all([
      settled(batch('c1', 70n)),
      settled(batch('c2', 71n, [late])),
      settled(batch('c3', 72n)),
      settled(batch('c4', 73n)),
    ]);
    expect(outcomes.map((o) => o.ok)).to.deep.equal([true, false, false, false]);
    expect((outcomes[1] as { error: { message: string } }).error.message).to.contain('refused at commit');
    for (const o of outcomes.slice(2))
      expect((o as { error: { code: string } }).error.code).to.equal(LEDGER_CODES.PIPELINE_BROKEN);
    const kept = await t.pool.query(`SELECT count(*)::int AS n, max(slot) AS hi FROM receipts`);
    expect(kept.rows[0]).to.deep.equal({ n: 70, hi: '70' });
    expect((await ledger.getInvoice('B'))!.creditedAmount).to.equal(70n);
    expect(await ledger.getCheckpoint('localnet', 'file')).to.equal(70n);
    // No transaction of the pipeline is left holding a lock: the invoice takes a new batch at once.
    await t.pool.query(`DROP TRIGGER refuse_at_commit ON receipts`);
    const again = await ledger.applyBatch({
      cluster: 'localnet',
      source: 'file',
      receipts: payments('c3', 40, 'dep-b', 1n, 72n),
    });
    expect(again.credited).to.deep.equal([{ invoiceId: 'B', amount: 40n }]);
  });
});
