// The simulation models the ledger's rule in memory (sim/ledger.ts). This holds that model to the real ledgers in
// PostgreSQL, the plain reference ledger (indexer/ledger/reference.ts) and the fast one (indexer/ledger/ledger.ts):
// the same random streams of deliveries (repeats inside and across batches, reorders, several transfers per
// transaction, overpayments, late payments, unknown references, other mints, malformed receipts, big batches that
// take the fast ledger's COPY path) go to the model and to each, and each batch's answer and the tables after the
// stream (receipts and their invoices, invoice credits and states, exceptions, fulfilments and outbox rows,
// delivery counters, checkpoints) must be the same. Were the model to drift from the SQL, the simulation would be
// checking another ledger than the one that runs.
import { expect } from 'chai';
import fc from 'fast-check';
import pino from 'pino';
import type { Pool } from 'pg';
import { createLedger } from '../../indexer/ledger';
import { createInvoices, type Invoices } from '../../indexer/ledger/invoices';
import { createReferenceLedger } from '../../indexer/ledger/reference';
import type { Receipt } from '../../indexer/decode/receipt';
import type { ApplyBatchResult, ReceiptSource } from '../../indexer/ledger/types';
import { REAL_CORES } from '../../sim/cores';
import { createDatabase, type Tables } from '../../sim/database';
import { stageBatch } from '../../sim/ledger';
import { createTestDb, type TestDb } from '../../testkit/test-db';
import type { BaseUnits } from '../../common/amount';

const CLUSTER = 'sim';
const RUNS = Number(process.env.ONCEPAY_SIM_LEDGER_RUNS ?? 25);

interface Stream {
  invoices: Array<{ amount: number; byReference: boolean }>;
  txs: Array<Array<{ to: number; amount: number; mint: 'USDC' | 'EURC'; reference: 'own' | 'other' | 'none' }>>;
  batches: Array<{
    source: ReceiptSource;
    picks: Array<{ tx: number; transfer: number }>;
    malformed: number;
    checkpoint: number | null;
  }>;
}

const streamArb: fc.Arbitrary<Stream> = fc.record({
  invoices: fc.array(
    fc.record({ amount: fc.integer({ min: 1, max: 6 }).map((n) => n * 10), byReference: fc.boolean() }),
    {
      minLength: 1,
      maxLength: 4,
    },
  ),
  txs: fc.array(
    fc.array(
      fc.record({
        to: fc.integer({ min: -1, max: 3 }),
        amount: fc.integer({ min: 1, max: 8 }).map((n) => n * 5),
        mint: fc.constantFrom('USDC' as const, 'USDC' as const, 'EURC' as const),
        reference: fc.constantFrom('own' as const, 'own' as const, 'other' as const, 'none' as const),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    { minLength: 1, maxLength: 40 },
  ),
  batches: fc.array(
    fc.record({
      source: fc.constantFrom<ReceiptSource>('scanner', 'webhook', 'stream', 'backfill'),
      // Up to 90 picks: a batch of 32 or more new receipts goes in by COPY, 64 or more feeds the probe prediction.
      picks: fc.array(fc.record({ tx: fc.nat(), transfer: fc.nat() }), { maxLength: 90 }),
      malformed: fc.constantFrom(0, 0, 0, 1, 2),
      checkpoint: fc.option(fc.integer({ min: 0, max: 50 }), { nil: null }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
});

function receiptsOf(s: Stream): Receipt[][] {
  return s.txs.map((transfers, t) =>
    transfers.map((x, ix) => {
      const to = x.to < 0 ? -1 : x.to % s.invoices.length;
      const inv = to >= 0 ? s.invoices[to] : undefined;
      const references =
        inv?.byReference && x.reference !== 'none' ? [x.reference === 'own' ? `ref${to}` : `ref-other${t}`] : undefined;
      return {
        signature: `sig${t}`,
        slot: BigInt(100 + Math.floor(t / 3)),
        blockTime: null,
        ixIndex: ix,
        innerIndex: -1,
        program: 'spl-token',
        kind: 'transferChecked',
        mint: x.mint,
        source: `payer${t}`,
        destination: to >= 0 ? `dep${to}` : 'stranger',
        destinationOwner: null,
        amount: BigInt(x.amount) as BaseUnits,
        ...(references ? { references } : {}),
      } satisfies Receipt;
    }),
  );
}

/** What both sides are compared on, in a canonical order. */
interface State {
  receipts: string[];
  invoices: string[];
  exceptions: string[];
  fulfilments: string[];
  counters: string[];
  checkpoints: string[];
}

const sorted = (xs: string[]) => [...xs].sort();

function answerOf(r: ApplyBatchResult): unknown {
  return {
    inserted: r.inserted,
    duplicates: r.duplicates,
    credited: sorted(r.credited.map((c) => `${c.invoiceId}=${c.amount}`)),
    exceptions: sorted(
      r.exceptions.map((e) => `${e.signature}/${e.ixIndex}/${e.innerIndex} ${e.kind} ${e.amount} ${e.invoiceId}`),
    ),
    fulfilled: sorted(r.fulfilled),
    rejected: r.rejected.map((x) => `${x.index} ${x.code}`),
  };
}

function modelState(t: Readonly<Tables>): State {
  return {
    receipts: sorted([...t.receipts].map(([k, r]) => `${k} ${r.receipt.amount} ${r.invoiceId} ${r.firstSource}`)),
    invoices: sorted([...t.invoices.values()].map((i) => `${i.id} ${i.creditedAmount} ${i.status}`)),
    exceptions: sorted(t.exceptions.map((e) => `${e.receipt} ${e.kind} ${e.amount} ${e.invoiceId}`)),
    fulfilments: sorted(
      [...t.fulfilments].map(
        ([inv, id]) => `${inv} ${id} ${t.outbox.get(id)?.idempotencyKey} ${t.outbox.get(id)?.state}`,
      ),
    ),
    counters: sorted([...t.counters].map(([s, c]) => `${s} ${c.delivered} ${c.inserted} ${c.duplicates}`)),
    checkpoints: sorted([...t.checkpoints].map(([s, slot]) => `${s} ${slot}`)),
  };
}

async function sqlState(pool: Pool): Promise<State> {
  const q = async (text: string) => (await pool.query(text)).rows.map((r) => Object.values(r).join(' '));
  return {
    receipts: sorted(
      await q(
        `SELECT signature || '/' || ix_index || '/' || inner_index, amount::text, coalesce(invoice_id, 'null'), first_source FROM receipts`,
      ),
    ),
    invoices: sorted(await q(`SELECT id, credited_amount::text, status FROM invoices`)),
    exceptions: sorted(
      await q(`SELECT r.signature || '/' || r.ix_index || '/' || r.inner_index, e.kind, e.amount::text, coalesce(e.invoice_id, 'null')
                 FROM exceptions e JOIN receipts r ON r.id = e.receipt_id`),
    ),
    fulfilments: sorted(
      await q(
        `SELECT f.invoice_id, f.id, o.idempotency_key, o.state FROM fulfilments f LEFT JOIN outbox o ON o.fulfilment_id = f.id`,
      ),
    ),
    counters: sorted(await q(`SELECT source, delivered, inserted, duplicates FROM receipt_delivery_counts`)),
    checkpoints: sorted(await q(`SELECT source, slot FROM checkpoints`)),
  };
}

describe('sim: the in-memory ledger rule holds to the real ledgers (PostgreSQL) on random delivery streams', function () {
  this.timeout(300_000);
  let db: TestDb;

  before(async () => {
    db = await createTestDb('sim_ledger_model');
  });
  after(async () => db?.drop());

  // One entry per real ledger the model is held to: the plain reference ledger (the rule alone, one INSERT … ON
  // CONFLICT DO NOTHING … RETURNING per receipt) and the fast one that runs (probe, COPY, pipeline).
  const silent = pino({ level: 'silent' });
  type RealLedger = Pick<Invoices, 'createInvoice'> & Pick<ReturnType<typeof createLedger>, 'applyBatch'>;
  const ledgers: Array<{ name: string; create(pool: Pool): RealLedger }> = [
    {
      name: 'indexer/ledger/reference',
      create: (pool) => ({ ...createInvoices(pool), ...createReferenceLedger({ db: pool, log: silent }) }),
    },
    { name: 'indexer/ledger', create: (pool) => createLedger({ db: pool, log: silent }) },
  ];

  for (const impl of ledgers) {
    it(`${impl.name}: the same answers per batch and the same rows after ${RUNS} random streams`, async () => {
      await fc.assert(
        fc.asyncProperty(streamArb, async (s) => {
          await db.pool.query(
            'TRUNCATE receipts, invoices, exceptions, fulfilments, outbox, receipt_delivery_counts, checkpoints CASCADE',
          );
          const ledger = impl.create(db.pool);
          const model = createDatabase();
          const session = model.connect();
          for (const [i, inv] of s.invoices.entries()) {
            await ledger.createInvoice({
              id: `inv${i}`,
              mint: 'USDC',
              expectedAmount: BigInt(inv.amount),
              depositAddress: `dep${i}`,
              referenceKey: inv.byReference ? `ref${i}` : null,
            });
            model.seed((t) =>
              t.invoices.set(`inv${i}`, {
                id: `inv${i}`,
                merchant: 'default',
                mint: 'USDC',
                expectedAmount: BigInt(inv.amount),
                creditedAmount: 0n,
                depositAddress: `dep${i}`,
                referenceKey: inv.byReference ? `ref${i}` : null,
                status: 'open',
                createdSeq: i,
              }),
            );
          }
          const txs = receiptsOf(s);
          for (const b of s.batches) {
            const receipts: Receipt[] = b.picks.map(({ tx, transfer }) => {
              const t = txs[tx % txs.length];
              return { ...t[transfer % t.length] };
            });
            for (let m = 0; m < b.malformed; m++)
              receipts.splice(m % (receipts.length + 1), 0, {
                ...(txs[0][0] as Receipt),
                amount: 5 as unknown as BaseUnits,
              });
            const input = {
              source: b.source,
              receipts,
              ...(b.checkpoint === null ? {} : { checkpoint: b.checkpoint }),
            };
            const real = await ledger.applyBatch({
              cluster: CLUSTER,
              source: b.source,
              receipts,
              ...(b.checkpoint === null ? {} : { checkpoint: { slot: b.checkpoint } }),
            });
            let modelled: ApplyBatchResult | undefined;
            model.begin(session, 'test', (t) => {
              const staged = stageBatch(t, input, REAL_CORES, CLUSTER);
              modelled = staged.result;
              return staged.apply;
            });
            model.commit(session);
            expect(answerOf(modelled!), 'the batch answer').to.deep.equal(answerOf(real));
          }
          expect(modelState(model.peek())).to.deep.equal(await sqlState(db.pool));
        }),
        { numRuns: RUNS, seed: Number(process.env.ONCEPAY_SIM_SEED ?? Date.now() % 2 ** 31) },
      );
    });
  }
});
