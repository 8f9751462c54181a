// The ledger's two ways in, each on its own (indexer/ledger/probe.ts, copy-path.ts, insert-path.ts), against the real
// PostgreSQL server, and their pure parts without it: the probe answers what is unknown; the COPY inserts every
// candidate or, on an identity already there, nothing (rolled back to its savepoint, the transaction still usable);
// the INSERT answers only the rows it inserted and matches again on them.
import { expect } from 'chai';
import type { PoolClient } from 'pg';
import { withTransaction } from '../../../db/sql';
import type { Receipt } from '../../../indexer/decode/receipt';
import { copyIn, receiptCopyText } from '../../../indexer/ledger/copy';
import { COPY_MIN, insertByCopy, thenRun, usesCopy } from '../../../indexer/ledger/copy-path';
import { columns, insertByStatement } from '../../../indexer/ledger/insert-path';
import { lockCandidates, type Planning, planReceipts } from '../../../indexer/ledger/credits';
import type { InvoiceState } from '../../../indexer/match/types';
import { identities, unknownReceipts } from '../../../indexer/ledger/probe';
import { COPY_RECEIPTS } from '../../../indexer/ledger/queries';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { addr, invoiceState, receipt, rejection, sig } from './fixtures';

const MINT = addr('mint-usdc');
const A = addr('A');
const pay = (label: string, amount: bigint, slot = 100n, to = A): Receipt =>
  receipt({ signature: sig(label), destination: to, amount, slot });

describe('indexer/ledger insert paths (pure)', () => {
  it('COPY only for candidates expected new, and COPY_MIN of them or more', () => {
    expect(usesCopy(true, COPY_MIN)).to.equal(true);
    expect(usesCopy(true, COPY_MIN - 1)).to.equal(false);
    expect(usesCopy(false, 10 * COPY_MIN)).to.equal(false);
  });

  it('thenRun hands every chunk over, then runs its callback once the last was taken, not before', () => {
    const calls: string[] = [];
    const it = thenRun(['a', 'b'], () => calls.push('after'));
    expect([it.next().value, calls.length]).to.deep.equal(['a', 0]);
    expect([it.next().value, calls.length]).to.deep.equal(['b', 0]);
    expect(it.next().done).to.equal(true);
    expect(calls).to.deep.equal(['after']);
  });

  it('columns lays a batch out as the INSERT statement takes it: text slots and amounts, nulls kept', () => {
    const r1 = pay('c1', 5n, 7n);
    const r2 = {
      ...pay('c2', 18446744073709551615n),
      slot: null,
      blockTime: 1_790_000_000,
      destinationOwner: undefined as unknown as null,
    };
    const c = columns([r1, r2], ['INV', null]);
    expect(c.signature).to.deep.equal([sig('c1'), sig('c2')]);
    expect(c.slot).to.deep.equal(['7', null]);
    expect(c.blockTime).to.deep.equal([null, '1790000000']);
    expect(c.amount).to.deep.equal(['5', '18446744073709551615']);
    expect(c.destinationOwner).to.deep.equal([null, null]);
    expect(c.invoiceId).to.deep.equal(['INV', null]);
  });

  it("identities are the receipts' keys, in order", () => {
    const r = [pay('k1', 1n), { ...pay('k2', 1n), ixIndex: 3, innerIndex: 0 }];
    expect(identities(r)).to.deep.equal({
      signatures: [sig('k1'), sig('k2')],
      ixIndexes: [0, 3],
      innerIndexes: [-1, 0],
    });
  });
});

describe('indexer/ledger insert paths (PostgreSQL)', () => {
  let t: TestDb;
  beforeEach(async () => {
    t = await createTestDb('insert_paths');
    await t.pool.query(
      `INSERT INTO invoices (id, mint, expected_amount, deposit_address) VALUES ('INV-A', $1, 100, $2)`,
      [MINT, A],
    );
  });
  afterEach(async () => t.drop());

  /** `rs` stored already, as another transaction would have, without credits (what the paths must not count). */
  async function stored(rs: Receipt[]): Promise<void> {
    const c = await t.pool.connect();
    try {
      await copyIn(
        c,
        COPY_RECEIPTS,
        receiptCopyText(
          'localnet',
          'scanner',
          rs,
          rs.map(() => null),
        ),
      );
    } finally {
      c.release();
    }
  }
  const count = async () => (await t.pool.query(`SELECT count(*)::int AS n FROM receipts`)).rows[0].n as number;
  /** `fn` in one transaction, with the invoices `chain` could pay locked and the chain matched against them. */
  const inTransaction = <T>(
    chain: Receipt[],
    fn: (c: PoolClient, p: Planning, invoices: InvoiceState[]) => Promise<T>,
  ) =>
    withTransaction(t.pool, async (c) => {
      const invoices = await lockCandidates(c, chain);
      return fn(c, planReceipts(chain, invoices), invoices);
    });

  it('the probe answers the receipts not stored yet, in the order given', async () => {
    const [r1, r2, r3] = [pay('p1', 1n), pay('p2', 1n), pay('p3', 1n)];
    await stored([r2]);
    const unknown = await withTransaction(t.pool, (c) => unknownReceipts(c, 'localnet', [r3, r2, r1]));
    expect(unknown).to.deep.equal([r3, r1]);
  });

  it('COPY inserts every candidate with its invoice, and answers the credits and the rows that raise exceptions', async () => {
    const chain = [pay('n1', 60n, 10n), pay('n2', 60n, 11n), pay('n3', 5n, 12n, addr('nobody'))];
    const done = await inTransaction(chain, (c, planning) => insertByCopy(c, 'localnet', 'file', chain, planning));
    expect(done!.inserted).to.equal(chain);
    expect(done!.credits.credited).to.deep.equal([{ invoiceId: 'INV-A', amount: 100n }]);
    expect(done!.credits.raised.map((e) => [e.kind, e.signature, e.amount])).to.deep.equal([
      ['overpayment', sig('n2'), 20n],
    ]);
    const { rows } = await t.pool.query(
      `SELECT id::text, signature, invoice_id, first_source::text FROM receipts ORDER BY slot`,
    );
    expect(rows.map((r) => [r.signature, r.invoice_id, r.first_source])).to.deep.equal([
      [sig('n1'), 'INV-A', 'file'],
      [sig('n2'), 'INV-A', 'file'],
      [sig('n3'), null, 'file'],
    ]);
    expect(done!.idOf(chain[1])).to.equal(rows[1].id); // the exception's receipt row
  });

  it('COPY meeting an identity already stored inserts nothing, and the transaction goes on', async () => {
    const chain = [pay('m1', 1n, 10n), pay('m2', 1n, 11n), pay('m3', 1n, 12n)];
    await stored([chain[2]]);
    const { done, after } = await inTransaction(chain, async (c, planning) => ({
      done: await insertByCopy(c, 'localnet', 'file', chain, planning),
      after: (await c.query(`SELECT count(*)::int AS n FROM receipts`)).rows[0].n,
    }));
    expect(done).to.equal(undefined);
    expect(after).to.equal(1); // the savepoint took the COPY back; the transaction still answered
    expect(await count()).to.equal(1);
  });

  it('COPY refused for another reason than a stored identity fails: only a unique violation falls back', async () => {
    const chain = [pay('f1', 1n)];
    const planning = planReceipts(chain, [invoiceState({ id: 'NOT-THERE', mint: MINT, depositAddress: A })]);
    const e = await rejection(withTransaction(t.pool, (c) => insertByCopy(c, 'localnet', 'file', chain, planning)));
    expect(e.code).to.equal('23503'); // the invoice check (migration 0012)
    expect(await count()).to.equal(0);
  });

  it('the INSERT answers only what it inserted, and matches again on those: a receipt stored elsewhere is not credited', async () => {
    // Planned together, 60 + 60 pays INV-A and overpays by 20; but the first is in the ledger already (another
    // transaction's), so only the second is this one's: a credit of 60, no overpayment.
    const chain = [pay('i1', 60n, 10n), pay('i2', 60n, 11n)];
    await stored([chain[0]]);
    const done = await inTransaction(chain, (c, planning, invoices) =>
      insertByStatement(c, 'localnet', 'file', chain, planning, invoices),
    );
    expect(done.inserted).to.deep.equal([chain[1]]);
    expect(done.credits.credited).to.deep.equal([{ invoiceId: 'INV-A', amount: 60n }]);
    expect(done.credits.raised).to.deep.equal([]);
    const { rows } = await t.pool.query(`SELECT id::text, invoice_id FROM receipts WHERE signature = $1`, [sig('i2')]);
    expect(rows[0].invoice_id).to.equal('INV-A');
    expect(done.idOf(chain[1])).to.equal(rows[0].id);
    expect(await count()).to.equal(2);
  });
});
