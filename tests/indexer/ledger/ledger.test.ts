// The ledger against the real PostgreSQL server, each suite in its own schema.
import { expect } from 'chai';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import {
  ApplyBatchResult,
  createLedger,
  fulfilmentOpId,
  Ledger,
  LEDGER_CODES,
  ReceiptSource,
} from '../../../indexer/ledger';
import { createIndexerMetrics } from '../../../indexer/metrics';
import type { Receipt } from '../../../indexer/decode/receipt';
import { addr, receipt, sig } from './fixtures';

const CLUSTER = 'localnet';
const USDC = addr('mint-usdc');

async function snapshot(t: TestDb) {
  const q = async (sql: string) => (await t.pool.query(sql)).rows;
  return {
    invoices: await q(`SELECT id, credited_amount::text, status FROM invoices ORDER BY id`),
    receipts: await q(
      `SELECT signature, ix_index, inner_index, amount::text, invoice_id FROM receipts ORDER BY signature, ix_index, inner_index`,
    ),
    exceptions: await q(
      `SELECT e.kind, e.amount::text, e.invoice_id, r.signature FROM exceptions e JOIN receipts r ON r.id = e.receipt_id ORDER BY r.signature, e.kind`,
    ),
    fulfilments: await q(`SELECT id, invoice_id FROM fulfilments ORDER BY id`),
    outbox: await q(`SELECT fulfilment_id, idempotency_key, state FROM outbox ORDER BY fulfilment_id`),
  };
}

/** Every statement the ledger sends through the pool's clients, in order. */
function recordStatements(t: TestDb): string[] {
  const sent: string[] = [];
  const wrapped = new WeakSet<object>();
  t.pool.on('acquire', (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      const q = a[0] as { text?: unknown } | string;
      if (typeof q === 'string') sent.push(q);
      else if (q && typeof q.text === 'string') sent.push(q.text);
      return query(...a);
    };
  });
  return sent;
}

/** `n` receipts to addresses no invoice watches. */
function fillerOf(tag: string, n: number, slot = 5n): Receipt[] {
  return Array.from({ length: n }, (_, i) =>
    receipt({ signature: sig(`${tag}-${i}`), destination: addr(`nobody-${i}`), amount: 1n, slot }),
  );
}

/**
 * Another ledger transaction, held open while `apply` runs: it locked invoice X, inserted `k` (60 to X) and credited
 * it. It commits once the batch is queued behind its lock on X (having seen k as new); answers the batch's result.
 */
async function raceOnX(t: TestDb, k: Receipt, apply: () => Promise<ApplyBatchResult>): Promise<ApplyBatchResult> {
  const other = await t.pool.connect();
  try {
    await other.query('BEGIN');
    await other.query(`SELECT id FROM invoices WHERE id = 'X' FOR UPDATE`);
    await other.query(
      `INSERT INTO receipts (cluster, signature, ix_index, inner_index, slot, program, kind, mint, source, destination, amount, invoice_id, first_source)
       VALUES ($1, $2, 0, -1, 1, 'spl-token', 'transferChecked', $3, $4, $5, 60, 'X', 'webhook')`,
      [CLUSTER, k.signature, USDC, k.source, k.destination],
    );
    await other.query(`UPDATE invoices SET credited_amount = 60 WHERE id = 'X'`);
    const pending = apply();
    for (let i = 0; i < 500; i++) {
      const { rows } = await t.pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM invoices%FOR UPDATE%'`,
      );
      if (rows[0].n > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await other.query('COMMIT');
    return await pending;
  } finally {
    other.release();
  }
}

describe('indexer/ledger', () => {
  let t: TestDb;
  let ledger: Ledger;
  beforeEach(async () => {
    t = await createTestDb('ledger');
    ledger = createLedger({ db: t.pool });
  });
  afterEach(async () => t.drop());

  it('applies the same receipts 20 times over four sources exactly as once, counting duplicates per source', async () => {
    // 10 invoices; payments: exact, partial, two-part, over, late, wrong mint, unwatched.
    for (let i = 0; i < 10; i++) {
      await ledger.createInvoice({
        id: `INV-${i}`,
        mint: USDC,
        expectedAmount: 1000n,
        depositAddress: addr(`dep-${i}`),
      });
    }
    const receipts: Receipt[] = [];
    for (let i = 0; i < 10; i++) {
      receipts.push(
        receipt({
          signature: sig(`pay-${i}`),
          destination: addr(`dep-${i}`),
          amount: i < 5 ? 1000n : 400n,
          slot: BigInt(100 + i),
        }),
      );
      receipts.push(
        receipt({
          signature: sig(`pay2-${i}`),
          destination: addr(`dep-${i}`),
          amount: 700n,
          slot: BigInt(200 + i),
          ixIndex: 1,
        }),
      );
    }
    receipts.push(
      receipt({ signature: sig('wrong-mint'), destination: addr('dep-0'), amount: 5n, mint: addr('other-mint') }),
    );
    receipts.push(receipt({ signature: sig('unwatched'), destination: addr('nobody'), amount: 9n }));

    const once = await createTestDb('ledger_once');
    try {
      const l1 = createLedger({ db: once.pool });
      for (let i = 0; i < 10; i++)
        await l1.createInvoice({ id: `INV-${i}`, mint: USDC, expectedAmount: 1000n, depositAddress: addr(`dep-${i}`) });
      await l1.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts });
      const expected = await snapshot(once);

      const sources: ReceiptSource[] = ['scanner', 'backfill', 'file', 'webhook'];
      const delivered: Record<string, number> = {};
      for (let round = 0; round < 20; round++) {
        const source = sources[round % 4];
        // The first delivery is the reference one; every later round delivers everything again, in another
        // order and split into other batches.
        const shuffled =
          round === 0
            ? receipts
            : [...receipts].sort(
                (a, b) => (a.signature.charCodeAt(round % 40) ^ round) - (b.signature.charCodeAt(round % 40) ^ round),
              );
        const size = round === 0 ? receipts.length : 3 + (round % 7);
        for (let i = 0; i < shuffled.length; i += size)
          await ledger.applyBatch({ cluster: CLUSTER, source, receipts: shuffled.slice(i, i + size) });
        delivered[source] = (delivered[source] ?? 0) + receipts.length;
      }
      const got = await snapshot(t);
      expect(got).to.deep.equal(expected);
      expect(got.invoices.filter((r) => r.status === 'paid')).to.have.length(10);
      expect(got.fulfilments).to.have.length(10);
      const counts = (
        await t.pool.query(
          `SELECT source, delivered::int, inserted::int, duplicates::int FROM receipt_delivery_counts ORDER BY source`,
        )
      ).rows;
      expect(counts.reduce((s, r) => s + r.inserted, 0)).to.equal(receipts.length);
      for (const r of counts) {
        expect(r.delivered).to.equal(delivered[r.source]);
        expect(r.duplicates).to.equal(r.delivered - r.inserted);
      }
      // The first round was the scanner's: it inserted everything, every later delivery is a duplicate.
      expect(counts.find((r) => r.source === 'scanner')!.inserted).to.equal(receipts.length);
      expect(counts.find((r) => r.source === 'webhook')!.duplicates).to.equal(5 * receipts.length);
    } finally {
      await once.drop();
    }
  });

  it('credits two transfers of one transaction to two watched addresses', async () => {
    await ledger.createInvoice({ id: 'A', mint: USDC, expectedAmount: 10n, depositAddress: addr('a') });
    await ledger.createInvoice({ id: 'B', mint: USDC, expectedAmount: 20n, depositAddress: addr('b-owner') });
    const s = sig('two-in-one');
    const res = await ledger.applyBatch({
      cluster: CLUSTER,
      source: 'scanner',
      receipts: [
        receipt({ signature: s, ixIndex: 0, destination: addr('a'), amount: 10n }),
        receipt({
          signature: s,
          ixIndex: 0,
          innerIndex: 2,
          destination: addr('b-ata'),
          destinationOwner: addr('b-owner'),
          amount: 20n,
        }),
      ],
    });
    expect(res.inserted).to.equal(2);
    expect(res.credited.map((c) => [c.invoiceId, c.amount]).sort()).to.deep.equal([
      ['A', 10n],
      ['B', 20n],
    ]);
    expect(res.fulfilled.sort()).to.deep.equal(['A', 'B']);
    expect((await ledger.getInvoice('B'))!.status).to.equal('paid');
  });

  it('records a second payment to a paid invoice, the excess of an overpayment, and an unknown reference as exceptions', async () => {
    await ledger.createInvoice({
      id: 'P',
      mint: USDC,
      expectedAmount: 100n,
      depositAddress: addr('merchant'),
      referenceKey: addr('ref-p'),
    });
    const res1 = await ledger.applyBatch({
      cluster: CLUSTER,
      source: 'webhook',
      receipts: [
        receipt({
          signature: sig('p1'),
          destination: addr('m-ata'),
          destinationOwner: addr('merchant'),
          amount: 130n,
          references: [addr('ref-p')],
        }),
      ],
    });
    expect(res1.credited).to.deep.equal([{ invoiceId: 'P', amount: 100n }]);
    expect(res1.exceptions.map((e) => [e.kind, e.amount])).to.deep.equal([['overpayment', 30n]]);
    const res2 = await ledger.applyBatch({
      cluster: CLUSTER,
      source: 'scanner',
      receipts: [
        receipt({
          signature: sig('p2'),
          destination: addr('m-ata'),
          destinationOwner: addr('merchant'),
          amount: 100n,
          references: [addr('ref-p')],
          slot: 300n,
        }),
        receipt({
          signature: sig('p3'),
          destination: addr('m-ata'),
          destinationOwner: addr('merchant'),
          amount: 42n,
          references: [addr('ref-unknown')],
          slot: 301n,
        }),
      ],
    });
    expect(res2.credited).to.deep.equal([]);
    expect(res2.exceptions.map((e) => [e.kind, e.invoiceId, e.amount]).sort()).to.deep.equal([
      ['late_payment', 'P', 100n],
      ['unknown_reference', null, 42n],
    ]);
    const r = await ledger.report();
    expect(r.exceptions).to.deep.equal({
      overpayment: { count: 1, amount: '30' },
      late_payment: { count: 1, amount: '100' },
      unknown_reference: { count: 1, amount: '42' },
    });
    expect(r.invoices).to.deep.include.members([
      {
        id: 'P',
        merchant: 'default',
        mint: USDC,
        expected: '100',
        credited: '100',
        status: 'paid',
        paidAt: r.invoices[0].paidAt,
      },
    ]);
    expect(r.outbox.pending).to.equal(1);
  });

  it('matches a Solana Pay reference found among the account keys when the money reached the deposit address', async () => {
    await ledger.createInvoice({
      id: 'SP-1',
      mint: USDC,
      expectedAmount: 10n,
      depositAddress: addr('wallet'),
      referenceKey: addr('ref-1'),
    });
    await ledger.createInvoice({
      id: 'SP-2',
      mint: USDC,
      expectedAmount: 10n,
      depositAddress: addr('wallet'),
      referenceKey: addr('ref-2'),
    });
    const keys = [addr('payer'), addr('wallet-ata'), addr('ref-2'), addr('fee-ata')];
    const s = sig('sp');
    const res = await ledger.applyBatch({
      cluster: CLUSTER,
      source: 'webhook',
      receipts: [
        receipt({
          signature: s,
          ixIndex: 0,
          destination: addr('wallet-ata'),
          destinationOwner: addr('wallet'),
          amount: 10n,
          accountKeys: keys,
        }),
        // A fee to a third party in the same transaction carries the same account keys: not the merchant's money.
        receipt({
          signature: s,
          ixIndex: 1,
          destination: addr('fee-ata'),
          destinationOwner: addr('fee-collector'),
          amount: 1n,
          accountKeys: keys,
        }),
      ],
    });
    expect(res.credited).to.deep.equal([{ invoiceId: 'SP-2', amount: 10n }]);
    expect(res.exceptions).to.deep.equal([]);
    expect((await ledger.getInvoice('SP-1'))!.creditedAmount).to.equal(0n);
  });

  it('creates exactly one fulfilment and outbox row per paid invoice, keyed by the invoice id', async () => {
    await ledger.createInvoice({ id: 'F', mint: USDC, expectedAmount: 10n, depositAddress: addr('f') });
    const pay = (n: number) =>
      receipt({ signature: sig(`f-${n}`), destination: addr('f'), amount: 5n, slot: BigInt(n) });
    await ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [pay(1), pay(2), pay(3)] });
    await ledger.applyBatch({ cluster: CLUSTER, source: 'backfill', receipts: [pay(1), pay(2), pay(3), pay(4)] });
    const { rows } = await t.pool.query(
      `SELECT f.id, o.idempotency_key, o.payload FROM fulfilments f JOIN outbox o ON o.fulfilment_id = f.id`,
    );
    expect(rows).to.have.length(1);
    expect(rows[0].id).to.equal(fulfilmentOpId('F'));
    expect(rows[0].idempotency_key).to.equal(fulfilmentOpId('F'));
    expect(rows[0].payload).to.deep.equal({
      type: 'invoice.paid',
      fulfilmentId: fulfilmentOpId('F'),
      invoiceId: 'F',
      merchant: 'default',
      mint: USDC,
      amount: '10',
    });
    const r = await ledger.report();
    expect(r.exceptions).to.deep.equal({ late_payment: { count: 2, amount: '10' } });
  });

  it('rejects malformed receipts with a code and still applies the good ones; amounts above 2^53 stay exact', async () => {
    const big = (1n << 60n) + 7n;
    await ledger.createInvoice({ id: 'BIG', mint: USDC, expectedAmount: big, depositAddress: addr('big') });
    const res = await ledger.applyBatch({
      cluster: CLUSTER,
      source: 'file',
      receipts: [
        receipt({ signature: sig('too-big'), destination: addr('big'), amount: 1n << 64n }),
        receipt({ signature: sig('neg'), destination: addr('big'), amount: -1n }),
        {
          ...receipt({ signature: sig('num'), destination: addr('big'), amount: 1n }),
          amount: 5 as unknown as bigint,
        } as Receipt,
        receipt({ signature: '', destination: addr('big'), amount: 1n }),
        receipt({ signature: sig('ok'), destination: addr('big'), amount: big }),
      ],
    });
    expect(res.rejected.map((r) => [r.index, r.code])).to.deep.equal(
      [0, 1, 2, 3].map((i) => [i, LEDGER_CODES.INVALID_RECEIPT]),
    );
    expect(res.inserted).to.equal(1);
    expect(res.fulfilled).to.deep.equal(['BIG']);
    const { rows } = await t.pool.query(`SELECT credited_amount::text AS c FROM invoices WHERE id = 'BIG'`);
    expect(rows[0].c).to.equal(big.toString());
    expect((await t.pool.query(`SELECT count(*)::int AS n FROM receipts`)).rows[0].n).to.equal(1);
  });

  it('on a path whose batches are new (no probe: the invoice lock goes out before validation) malformed receipts are still set aside', async () => {
    await ledger.createInvoice({ id: 'Q', mint: USDC, expectedAmount: 100n, depositAddress: addr('q') });
    // 64 new receipts: the path's next batch skips the probe and sends its lock for the batch as delivered.
    await ledger.applyBatch({ cluster: CLUSTER, source: 'file', receipts: fillerOf('early-lock', 64) });
    const sent = recordStatements(t);
    const malformed = [
      null,
      {},
      { ...receipt({ signature: sig('dest-num'), destination: addr('q'), amount: 1n }), destination: 42 },
      { ...receipt({ signature: sig('refs-text'), destination: addr('q'), amount: 1n }), references: 'x', amount: 1 },
    ] as unknown as Receipt[];
    const good = receipt({ signature: sig('early-lock-ok'), destination: addr('q'), amount: 100n });
    // The same receipt again, and once more with another slot (a source that got it wrong): one row, one credit.
    const again = { ...good };
    const otherSlot = { ...good, slot: good.slot! + 1n };
    const res = await ledger.applyBatch({
      cluster: CLUSTER,
      source: 'file',
      receipts: [...malformed, otherSlot, good, again],
    });
    // No probe; the invoice lock is the transaction's first statement.
    expect(sent.some((x) => x.includes('WHERE x.id IS NULL'))).to.equal(false);
    expect(sent[sent.indexOf('BEGIN') + 1]).to.match(/^SELECT id, merchant, mint/);
    expect(res.rejected.map((r) => [r.index, r.code])).to.deep.equal(
      [0, 1, 2, 3].map((i) => [i, LEDGER_CODES.INVALID_RECEIPT]),
    );
    expect([res.inserted, res.duplicates]).to.deep.equal([1, 2]);
    expect(res.fulfilled).to.deep.equal(['Q']);
    expect(res.exceptions).to.deep.equal([]);
    expect((await ledger.getInvoice('Q'))!.creditedAmount).to.equal(100n);
    const rows = await t.pool.query(`SELECT slot::text FROM receipts WHERE signature = $1`, [good.signature]);
    // The lower slot comes first in chain order and goes in; the other is the duplicate.
    expect(rows.rows).to.deep.equal([{ slot: good.slot!.toString() }]);
  });

  // Found while writing the reference ledger (reference.ts; its property test catches it too): without the probe,
  // repeats are dropped as neighbours in chain order, so one identity at two slots with a receipt between them
  // stayed twice, and the INSERT's RETURNING, joined back by identity alone, answered the one row for both
  // positions: both were credited (200 for one 100-unit row) and counted as inserted.
  for (const path of ['probe', 'no probe'] as const) {
    it(`one identity delivered at two slots in one batch, a receipt between them (${path}): one row, credited once`, async () => {
      await ledger.createInvoice({ id: 'S', mint: USDC, expectedAmount: 1000n, depositAddress: addr('s') });
      if (path === 'no probe') {
        await ledger.applyBatch({ cluster: CLUSTER, source: 'file', receipts: fillerOf('two-slots', 64) });
      }
      const sent = recordStatements(t);
      const paid = receipt({ signature: sig('two-slots'), destination: addr('s'), amount: 100n, slot: 100n });
      const between = receipt({
        signature: sig('two-slots-between'),
        destination: addr('nobody'),
        amount: 1n,
        slot: 101n,
      });
      const res = await ledger.applyBatch({
        cluster: CLUSTER,
        source: 'file',
        receipts: [{ ...paid, slot: 102n }, between, paid],
      });
      expect(sent.some((x) => x.includes('WHERE x.id IS NULL'))).to.equal(path === 'probe');
      expect([res.inserted, res.duplicates]).to.deep.equal([2, 1]);
      expect(res.credited).to.deep.equal([{ invoiceId: 'S', amount: 100n }]);
      expect((await ledger.getInvoice('S'))!.creditedAmount).to.equal(100n);
      const rows = await t.pool.query(`SELECT count(*)::int AS n FROM receipts WHERE signature = $1`, [paid.signature]);
      expect(rows.rows[0].n).to.equal(1);
      const counts = await t.pool.query(
        `SELECT inserted::int, duplicates::int FROM receipt_delivery_counts WHERE source = 'file'`,
      );
      expect(counts.rows[0]).to.deep.equal(
        path === 'probe' ? { inserted: 2, duplicates: 1 } : { inserted: 66, duplicates: 1 },
      );
    });
  }

  // Also found by the property test: values a receipt's columns cannot hold passed validation and failed the whole
  // batch's statement (22003 out of range, 22021 a NUL in text, 22P02 not a number, 54000 an index entry too large),
  // the good receipts with them. On both paths they are now set aside with their code; the lock statement, built
  // before validation on the path without the probe, skips a key PostgreSQL cannot hold.
  for (const path of ['probe', 'no probe'] as const) {
    it(`values the columns cannot hold are set aside with a code, the rest applied (${path})`, async () => {
      await ledger.createInvoice({ id: 'V', mint: USDC, expectedAmount: 100n, depositAddress: addr('v') });
      if (path === 'no probe') {
        await ledger.applyBatch({ cluster: CLUSTER, source: 'file', receipts: fillerOf('unholdable', 64) });
      }
      const base = receipt({ signature: sig('unholdable-base'), destination: addr('v'), amount: 1n });
      const unholdable = [
        { ...base, signature: sig('big-ix'), ixIndex: 2 ** 31 },
        { ...base, signature: sig('big-inner'), innerIndex: 2 ** 31 },
        { ...base, signature: sig('big-slot'), slot: 1n << 63n },
        { ...base, signature: sig('text-time'), blockTime: 'yesterday' },
        { ...base, signature: sig('half-time'), blockTime: 1.5 },
        { ...base, signature: `${sig('nul')}\u0000` },
        { ...base, signature: sig('nul-dest'), destination: `${addr('v')}\u0000` },
        // Refused for its amount; its reference (with a NUL) still reaches the lock built before validation.
        { ...base, signature: sig('nul-ref'), references: [`${addr('r')}\u0000`], amount: 1 },
        { ...base, signature: sig('text-refs'), references: addr('r') },
        { ...base, signature: 'x'.repeat(3000) },
      ] as unknown as Receipt[];
      const good = receipt({ signature: sig('unholdable-ok'), destination: addr('v'), amount: 100n });
      const res = await ledger.applyBatch({ cluster: CLUSTER, source: 'file', receipts: [...unholdable, good] });
      expect(res.rejected.map((r) => [r.index, r.code])).to.deep.equal(
        unholdable.map((_, i) => [i, LEDGER_CODES.INVALID_RECEIPT]),
      );
      expect([res.inserted, res.duplicates]).to.deep.equal([1, 0]);
      expect(res.fulfilled).to.deep.equal(['V']);
    });
  }

  it('reports exceptions for the wrong mint and an unknown mint without crediting', async () => {
    await ledger.createInvoice({ id: 'M', mint: USDC, expectedAmount: 10n, depositAddress: addr('m') });
    const res = await ledger.applyBatch({
      cluster: CLUSTER,
      source: 'file',
      receipts: [
        receipt({ signature: sig('m1'), destination: addr('m'), amount: 10n, mint: addr('bonk') }),
        receipt({ signature: sig('m2'), destination: addr('m'), amount: 10n, mint: null, kind: 'transfer' }),
      ],
    });
    expect(res.exceptions.map((e) => e.kind).sort()).to.deep.equal(['mint_mismatch', 'unknown_mint']);
    expect((await ledger.getInvoice('M'))!.creditedAmount).to.equal(0n);
  });

  it('moves checkpoints only forward, in the batch transaction', async () => {
    expect(await ledger.getCheckpoint(CLUSTER, 'scanner')).to.equal(null);
    await ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [], checkpoint: { slot: 500n } });
    await ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [], checkpoint: { slot: 400n } });
    expect(await ledger.getCheckpoint(CLUSTER, 'scanner')).to.equal(500n);
    expect(await ledger.setCheckpoint(CLUSTER, 'scanner', 501)).to.equal(501n);
    expect(await ledger.getCheckpoint(CLUSTER, 'backfill')).to.equal(null);
    let code: string | undefined;
    try {
      await ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [], checkpoint: { slot: -1n } });
    } catch (e) {
      code = (e as { code?: string }).code;
    }
    expect(code).to.equal(LEDGER_CODES.INVALID_CHECKPOINT);
  });

  it('refuses an unknown source and a conflicting invoice with their codes', async () => {
    let code: string | undefined;
    try {
      await ledger.applyBatch({ cluster: CLUSTER, source: 'carrier-pigeon' as ReceiptSource, receipts: [] });
    } catch (e) {
      code = (e as { code?: string }).code;
    }
    expect(code).to.equal(LEDGER_CODES.INVALID_SOURCE);
    const inv = { id: 'C', mint: USDC, expectedAmount: 10n, depositAddress: addr('c') };
    expect((await ledger.createInvoice(inv)).created).to.equal(true);
    expect((await ledger.createInvoice(inv)).created).to.equal(false);
    try {
      await ledger.createInvoice({ ...inv, expectedAmount: 11n });
      code = undefined;
    } catch (e) {
      code = (e as { code?: string }).code;
    }
    expect(code).to.equal(LEDGER_CODES.INVOICE_CONFLICT);
  });

  it('never credits a receipt twice when another transaction inserts it between the probe and the insert', async () => {
    await ledger.createInvoice({ id: 'X', mint: USDC, expectedAmount: 100n, depositAddress: addr('x') });
    const k = receipt({ signature: sig('race-k'), destination: addr('x'), amount: 60n, slot: 1n });
    const j = receipt({ signature: sig('race-j'), destination: addr('x'), amount: 60n, slot: 2n });
    const res = await raceOnX(t, k, () => ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [k, j] }));
    expect(res.inserted).to.equal(1);
    expect(res.duplicates).to.equal(1);
    expect(res.credited).to.deep.equal([{ invoiceId: 'X', amount: 40n }]);
    expect(res.exceptions.map((e) => [e.kind, e.amount, e.signature])).to.deep.equal([
      ['overpayment', 20n, j.signature],
    ]);
    expect((await ledger.getInvoice('X'))!.creditedAmount).to.equal(100n);
    const rows = (await t.pool.query(`SELECT signature, invoice_id FROM receipts ORDER BY slot`)).rows;
    expect(rows).to.deep.equal([
      { signature: k.signature, invoice_id: 'X' },
      { signature: j.signature, invoice_id: 'X' },
    ]);
  });

  it('after a mostly-new batch skips the probe and still credits only what it inserted (a replay matched again)', async () => {
    // Every statement the ledger sends, to see which batches probed (the identity-only LEFT JOIN LATERAL select).
    const sent = recordStatements(t);
    const probes = () => sent.filter((s) => s.includes('LEFT JOIN LATERAL')).length;
    await ledger.createInvoice({ id: 'P', mint: USDC, expectedAmount: 100n, depositAddress: addr('p') });
    const filler = (tag: string) => fillerOf(tag, 70);
    const first = receipt({ signature: sig('skip-1'), destination: addr('p'), amount: 60n, slot: 1n });
    const second = receipt({ signature: sig('skip-2'), destination: addr('p'), amount: 60n, slot: 2n });
    // 1: all new (probed: nothing known about this path yet). P gets 60.
    const a = await ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [first, ...filler('a')] });
    expect([a.inserted, probes()]).to.deep.equal([71, 1]);
    // 2: predicted new, so not probed; yet `first` and the old filler are in already. Planned with `first` in the
    // chain, P would take 40 from `first` and `second` would be a late payment; matched again on what was
    // inserted, `second` completes P (40) with an overpayment of 20.
    const b = await ledger.applyBatch({
      cluster: CLUSTER,
      source: 'scanner',
      receipts: [first, second, ...filler('a'), ...filler('b'), ...filler('c')],
    });
    expect(probes()).to.equal(1);
    expect([b.inserted, b.duplicates]).to.deep.equal([141, 71]);
    expect(b.credited).to.deep.equal([{ invoiceId: 'P', amount: 40n }]);
    expect(b.exceptions.map((e) => [e.kind, e.amount, e.signature])).to.deep.equal([
      ['overpayment', 20n, second.signature],
    ]);
    expect(b.fulfilled).to.deep.equal(['P']);
    // 3: the same again, predicted new and not probed: all duplicates, nothing credited.
    const c = await ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [second, ...filler('b')] });
    expect(probes()).to.equal(1);
    expect([c.inserted, c.duplicates, c.credited, c.exceptions, c.fulfilled]).to.deep.equal([0, 71, [], [], []]);
    // 4: after a mostly-duplicate batch the next one is probed again.
    await ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: filler('c') });
    expect(probes()).to.equal(2);
    const s = await snapshot(t);
    expect(s.invoices).to.deep.equal([{ id: 'P', credited_amount: '100', status: 'paid' }]);
    expect(s.receipts).to.have.length(212);
    expect(s.exceptions).to.deep.equal([
      { kind: 'overpayment', amount: '20', invoice_id: 'P', signature: second.signature },
    ]);
    expect(s.fulfilments).to.have.length(1);
    const counts = (
      await t.pool.query(`SELECT delivered::int, inserted::int, duplicates::int FROM receipt_delivery_counts`)
    ).rows;
    expect(counts).to.deep.equal([{ delivered: 71 + 212 + 71 + 70, inserted: 212, duplicates: 71 + 71 + 70 }]);
  });

  it('puts a batch of new receipts in by COPY: credits, exceptions on their own receipts, one fulfilment', async () => {
    const sent = recordStatements(t);
    await ledger.createInvoice({ id: 'C', mint: USDC, expectedAmount: 100n, depositAddress: addr('c') });
    await ledger.createInvoice({ id: 'D', mint: USDC, expectedAmount: 50n, depositAddress: addr('d') });
    const toC = [70n, 50n, 5n].map((amount, i) =>
      receipt({ signature: sig(`copy-c-${i}`), destination: addr('c'), amount, slot: BigInt(10 + i) }),
    );
    const toD = receipt({ signature: sig('copy-d'), destination: addr('d'), amount: 20n, slot: 11n });
    // Escaped in COPY's text format: a tab, a newline and a backslash in the stored fields.
    const odd = receipt({ signature: sig('copy-odd'), destination: 'a\tb\nc\\d', amount: 7n, slot: 12n });
    // 1,045 rows: the COPY goes in three chunks (ledger.ts COPY_CHUNK_ROWS), each made while the last one is sent.
    const batch = [...fillerOf('copy', 1_040), ...toC, toD, odd];
    const res = await ledger.applyBatch({ cluster: CLUSTER, source: 'webhook', receipts: batch });
    expect(sent.filter((s) => s.startsWith('COPY receipts'))).to.have.length(1);
    expect(sent.some((s) => s.includes('ON CONFLICT ON CONSTRAINT receipts_identity'))).to.equal(false);
    expect([res.inserted, res.duplicates]).to.deep.equal([batch.length, 0]);
    expect(res.credited).to.deep.equal([
      { invoiceId: 'C', amount: 100n },
      { invoiceId: 'D', amount: 20n },
    ]);
    expect(res.fulfilled).to.deep.equal(['C']);
    const s = await snapshot(t);
    expect([...s.exceptions].sort((a, b) => (a.kind < b.kind ? -1 : 1))).to.deep.equal([
      { kind: 'late_payment', amount: '5', invoice_id: 'C', signature: toC[2].signature },
      { kind: 'overpayment', amount: '20', invoice_id: 'C', signature: toC[1].signature },
    ]);
    expect(s.fulfilments).to.deep.equal([{ id: fulfilmentOpId('C'), invoice_id: 'C' }]);
    expect(s.outbox).to.have.length(1);
    const stored = await t.pool.query(
      `SELECT destination, invoice_id, first_source::text AS f FROM receipts WHERE signature = ANY($1) ORDER BY slot`,
      [[toC[0].signature, toD.signature, odd.signature]],
    );
    expect(stored.rows).to.deep.equal([
      { destination: addr('c'), invoice_id: 'C', f: 'webhook' },
      { destination: addr('d'), invoice_id: 'D', f: 'webhook' },
      { destination: 'a\tb\nc\\d', invoice_id: null, f: 'webhook' },
    ]);
    const counts = (
      await t.pool.query(`SELECT delivered::int, inserted::int, duplicates::int FROM receipt_delivery_counts`)
    ).rows;
    expect(counts).to.deep.equal([{ delivered: batch.length, inserted: batch.length, duplicates: 0 }]);
  });

  it('inserts in chain order (slot, then identity) by COPY and by INSERT alike: one lock order for both paths', async () => {
    const sent = recordStatements(t);
    for (const [tag, n] of [
      ['order-copy', 40],
      ['order-insert', 5],
    ] as const) {
      const rs = Array.from({ length: n }, (_, i) =>
        receipt({ signature: sig(`${tag}-${i}`), destination: addr(`o-${i}`), amount: 1n, slot: BigInt((i * 7) % 5) }),
      );
      await ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [...rs].reverse() });
      const got = await t.pool.query(`SELECT signature FROM receipts WHERE signature = ANY($1) ORDER BY id`, [
        rs.map((r) => r.signature),
      ]);
      const chain = [...rs].sort(
        (a, b) => Number(a.slot! - b.slot!) || (a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0),
      );
      expect(got.rows.map((r) => r.signature)).to.deep.equal(chain.map((r) => r.signature));
    }
    // The first batch went in by COPY, the second (under COPY_MIN receipts) by INSERT … ON CONFLICT.
    expect(sent.filter((x) => x.startsWith('COPY receipts'))).to.have.length(1);
    expect(sent.filter((x) => x.includes('ON CONFLICT ON CONSTRAINT receipts_identity'))).to.have.length(1);
  });

  it('falls back from COPY to INSERT … ON CONFLICT when another transaction inserted one of the batch meanwhile', async () => {
    const sent = recordStatements(t);
    await ledger.createInvoice({ id: 'X', mint: USDC, expectedAmount: 100n, depositAddress: addr('x') });
    const k = receipt({ signature: sig('copy-race-k'), destination: addr('x'), amount: 60n, slot: 1n });
    const j = receipt({ signature: sig('copy-race-j'), destination: addr('x'), amount: 60n, slot: 2n });
    const filler = fillerOf('copy-race', 40);
    // Our batch probes (k is not visible yet), waits for X, then its COPY meets k committed.
    const res = await raceOnX(t, k, () =>
      ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [k, j, ...filler] }),
    );
    expect([res.inserted, res.duplicates]).to.deep.equal([41, 1]);
    expect(res.credited).to.deep.equal([{ invoiceId: 'X', amount: 40n }]);
    expect(res.exceptions.map((e) => [e.kind, e.amount, e.signature])).to.deep.equal([
      ['overpayment', 20n, j.signature],
    ]);
    // The COPY was tried and rolled back to its savepoint; the INSERT put the rest in.
    expect(sent.filter((s) => s.startsWith('COPY receipts'))).to.have.length(1);
    expect(sent).to.include('ROLLBACK TO SAVEPOINT ledger_copy');
    expect(sent.filter((s) => s.includes('ON CONFLICT ON CONSTRAINT receipts_identity'))).to.have.length(1);
    expect((await ledger.getInvoice('X'))!.creditedAmount).to.equal(100n);
    const s = await snapshot(t);
    expect(s.receipts).to.have.length(42);
    expect(s.exceptions).to.deep.equal([
      { kind: 'overpayment', amount: '20', invoice_id: 'X', signature: j.signature },
    ]);
  });

  it('a COPY of several chunks that meets a committed identity in its last chunk is rolled back whole; the INSERT takes over', async () => {
    const sent = recordStatements(t);
    await ledger.createInvoice({ id: 'X', mint: USDC, expectedAmount: 100n, depositAddress: addr('x') });
    const filler = fillerOf('copy-late', 1_200);
    // k comes after every other receipt in chain order (slot, then identity: the COPY's row order), so it is in the
    // last chunk, after the ones before it were inserted.
    const k = receipt({ signature: sig('copy-late-k'), destination: addr('x'), amount: 60n, slot: 10n });
    const j = receipt({ signature: sig('copy-late-j'), destination: addr('x'), amount: 60n, slot: 2n });
    expect(filler.every((f) => f.slot! < k.slot!) && j.slot! < k.slot!).to.equal(true);
    const res = await raceOnX(t, k, () =>
      ledger.applyBatch({ cluster: CLUSTER, source: 'scanner', receipts: [k, j, ...filler] }),
    );
    expect([res.inserted, res.duplicates]).to.deep.equal([1_201, 1]);
    expect(res.credited).to.deep.equal([{ invoiceId: 'X', amount: 40n }]);
    expect(sent.filter((s) => s.startsWith('COPY receipts'))).to.have.length(1);
    expect(sent).to.include('ROLLBACK TO SAVEPOINT ledger_copy');
    expect(sent.filter((s) => s.includes('ON CONFLICT ON CONSTRAINT receipts_identity'))).to.have.length(1);
    const rows = await t.pool.query(
      `SELECT first_source::text AS f, count(*)::int AS n FROM receipts GROUP BY 1 ORDER BY 1`,
    );
    expect(rows.rows).to.deep.equal([
      { f: 'scanner', n: 1_201 },
      { f: 'webhook', n: 1 },
    ]);
    expect((await ledger.getInvoice('X'))!.creditedAmount).to.equal(100n);
  });

  it('gives the same totals when overlapping batches run concurrently, and counts metrics', async () => {
    const metrics = createIndexerMetrics();
    const l = createLedger({ db: t.pool, metrics });
    for (let i = 0; i < 20; i++)
      await l.createInvoice({
        id: `K-${String(i).padStart(2, '0')}`,
        mint: USDC,
        expectedAmount: 300n,
        depositAddress: addr(`k-${i}`),
      });
    const receipts: Receipt[] = [];
    for (let i = 0; i < 20; i++)
      for (let j = 0; j < 4; j++)
        receipts.push(
          receipt({ signature: sig(`k-${i}-${j}`), destination: addr(`k-${i}`), amount: 100n, slot: BigInt(j) }),
        );
    const sources: ReceiptSource[] = ['scanner', 'backfill', 'webhook', 'file'];
    // 8 workers, each delivering everything in its own order and batch size, all at once.
    await Promise.all(
      Array.from({ length: 8 }, (_, w) => {
        const mine = w % 2 ? [...receipts].reverse() : receipts;
        return (async () => {
          for (let i = 0; i < mine.length; i += 5 + w)
            await l.applyBatch({ cluster: CLUSTER, source: sources[w % 4], receipts: mine.slice(i, i + 5 + w) });
        })();
      }),
    );
    const r = await l.report();
    expect(r.invoices.every((i) => i.credited === '300' && i.status === 'paid')).to.equal(true);
    expect(r.exceptions).to.deep.equal({ late_payment: { count: 20, amount: '2000' } });
    expect(r.receipts.total).to.equal(80);
    expect(r.outbox.pending).to.equal(20);
    const text = await metrics.registry.metrics();
    const inserted = [...text.matchAll(/^oncepay_receipts_total\{[^}]*\} (\d+)$/gm)].reduce(
      (s, m) => s + Number(m[1]),
      0,
    );
    const dups = [...text.matchAll(/^oncepay_receipt_duplicates_total\{[^}]*\} (\d+)$/gm)].reduce(
      (s, m) => s + Number(m[1]),
      0,
    );
    expect(inserted).to.equal(80);
    expect(dups).to.equal(7 * 80);
    expect(text).to.match(/^oncepay_exceptions_total\{kind="late_payment"\} 20$/m);
  });
});
