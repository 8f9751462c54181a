// The fast ledger (ledger.ts: probe prediction, COPY, pipeline) held to the reference ledger (reference.ts: the rule
// one receipt at a time) by a property test: random streams of deliveries — repeats, reorders, several transfers per
// transaction, partial and over-payments, late payments, unknown references, other mints, malformed rows, batches cut
// at random, several sources and clusters, checkpoints — go to both, each on its own schema of the real PostgreSQL,
// and every batch's result and the final rows, credits, exceptions, fulfilments, outbox rows, counters and
// checkpoints must be the same.
//
// Bounded: FC_RUNS random streams per run (default 60), after three fixed ones (every path of the fast ledger, and
// the two-slot case below). A failure prints fast-check's seed and path and the shrunk stream;
// FC_SEED=<seed> FC_PATH=<path> scripts/test.sh tests/indexer/ledger/reference.test.ts replays it.
import { expect } from 'chai';
import fc from 'fast-check';
import pino from 'pino';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { applyInOrder, createLedger, RECEIPT_SOURCES } from '../../../indexer/ledger';
import type { ApplyBatchInput, ApplyBatchResult, ReceiptSource } from '../../../indexer/ledger';
import { createInvoices } from '../../../indexer/ledger/invoices';
import { createReferenceLedger } from '../../../indexer/ledger/reference';
import type { Receipt } from '../../../indexer/decode/receipt';
import { addr, receipt, sig } from './fixtures';

const silent = pino({ level: 'silent' });
const MINT = addr('mint-usdc');
const OTHER_MINT = addr('mint-other');
const DEPOSITS = [0, 1, 2, 3].map((i) => addr(`deposit-${i}`));
const OWNERS = [0, 1].map((i) => addr(`owner-wallet-${i}`));
const UNWATCHED = [0, 1].map((i) => addr(`unwatched-${i}`));
const REFS = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => addr(`reference-${i}`));

// ---- the world: invoices, and the transactions the chain holds ----

const invoiceArb = fc.record({
  deposit: fc.option(fc.constantFrom(...DEPOSITS, ...OWNERS), { nil: null }),
  withReference: fc.boolean(),
  expected: fc.bigInt(1n, 60n),
});

const transferArb = fc.record({
  destination: fc.constantFrom(...DEPOSITS, ...UNWATCHED),
  owner: fc.option(fc.constantFrom(...OWNERS), { nil: null }),
  /** A reference key carried by the instruction (index into REFS: some belong to no invoice). */
  reference: fc.option(fc.nat(REFS.length - 1), { nil: null }),
  /** …or only among the transaction's account keys. */
  referenceInKeysOnly: fc.boolean(),
  mint: fc.constantFrom<string | null>(MINT, MINT, MINT, OTHER_MINT, null),
  amount: fc.bigInt(1n, 80n),
  inner: fc.boolean(),
});

const transactionArb = fc.record({
  slot: fc.option(fc.bigInt(1n, 40n), { nil: null, freq: 12 }),
  transfers: fc.array(transferArb, { minLength: 1, maxLength: 3 }),
});

/** Rows a source should never send, each set aside with its code (the rest of its batch applied). */
const MALFORMED = [
  'null',
  'empty',
  'numberAmount',
  'negativeIx',
  'otherCluster',
  'noDestination',
  'textSlot',
  'textBlockTime',
  'hugeIx',
  'hugeSlot',
  'nulSignature',
] as const;
type Malformed = (typeof MALFORMED)[number];

// Mostly one path (cluster, source), so that the fast ledger's prediction from the path's last batch comes into play.
const batchArb = fc.record({
  source: fc.oneof(
    { weight: 3, arbitrary: fc.constant<ReceiptSource>('scanner') },
    { weight: 1, arbitrary: fc.constantFrom<ReceiptSource>(...RECEIPT_SOURCES) },
  ),
  cluster: fc.constantFrom('localnet', 'localnet', 'localnet', 'localnet', 'devnet'),
  checkpoint: fc.option(fc.bigInt(0n, 60n), { nil: null }),
});

const streamArb = fc.record({
  invoices: fc.array(invoiceArb, { minLength: 1, maxLength: REFS.length - 2 }),
  transactions: fc.array(transactionArb, { minLength: 1, maxLength: 90, size: 'max' }),
  /** The order of first deliveries: sort keys, one per receipt (extra ones ignored). */
  order: fc.array(fc.nat(), { maxLength: 270, size: 'max' }),
  /** Redeliveries: [receipt, where in the stream]. */
  repeats: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.boolean()), { maxLength: 150, size: 'medium' }),
  /** Whole redeliveries of the stream (a re-scan, a replaying provider), each in its own order. */
  replays: fc.array(fc.array(fc.nat(), { maxLength: 270, size: 'max' }), { maxLength: 2 }),
  /**
   * A source that got a receipt wrong: its identity again, delivered after every delivery of it, with a higher slot
   * and another amount ([receipt, slot added, amount, where after]). The receipt that went in first stays.
   */
  lies: fc.array(fc.tuple(fc.nat(), fc.bigInt(1n, 20n), fc.bigInt(1n, 80n), fc.nat()), { maxLength: 6 }),
  malformed: fc.array(fc.tuple(fc.constantFrom(...MALFORMED), fc.nat()), { maxLength: 6 }),
  /** Where the stream is cut into batches. */
  cuts: fc.array(fc.nat(), { maxLength: 7 }),
  batches: fc.array(batchArb, { minLength: 8, maxLength: 8 }),
  pipelined: fc.boolean(),
});
type Stream = typeof streamArb extends fc.Arbitrary<infer T> ? T : never;

function receiptsOf(s: Stream): Receipt[] {
  return s.transactions.flatMap((tx, t) =>
    tx.transfers.map((x, j) => {
      const references = x.reference === null || x.referenceInKeysOnly ? [] : [REFS[x.reference]];
      const accountKeys = [x.destination, ...(x.reference === null ? [] : [REFS[x.reference]])];
      return receipt({
        signature: sig(`tx-${t}`),
        slot: tx.slot,
        ixIndex: x.inner ? 0 : j,
        innerIndex: x.inner ? j : -1,
        destination: x.destination,
        destinationOwner: x.owner,
        mint: x.mint,
        amount: x.amount,
        references,
        accountKeys,
      });
    }),
  );
}

function malformedRow(kind: Malformed, i: number): Receipt {
  const good = receipt({ signature: sig(`bad-${i}`), destination: DEPOSITS[0], amount: 5n });
  const rows: Record<Malformed, unknown> = {
    null: null,
    empty: {},
    numberAmount: { ...good, amount: 5 },
    negativeIx: { ...good, ixIndex: -2 },
    otherCluster: { ...good, cluster: 'mainnet-beta' },
    noDestination: { ...good, destination: '' },
    textSlot: { ...good, slot: '12' },
    textBlockTime: { ...good, blockTime: 'yesterday' },
    hugeIx: { ...good, ixIndex: 2 ** 31 },
    hugeSlot: { ...good, slot: 1n << 63n },
    nulSignature: { ...good, signature: `${good.signature}\u0000` },
  };
  return rows[kind] as Receipt;
}

/** The stream as batches: first deliveries in a random order, repeats and malformed rows put in, cut at random. */
function batchesOf(s: Stream): ApplyBatchInput[] {
  const all = receiptsOf(s);
  const key = (i: number) => s.order[i] ?? i;
  const stream: Receipt[] = all
    .map((_, i) => i)
    .sort((a, b) => key(a) - key(b) || a - b)
    .map((i) => all[i]);
  // A repeat is a copy of the receipt (as a source decodes it again), or now and then the very same object.
  for (const [r, at, same] of s.repeats) {
    const again = all[r % all.length];
    stream.splice(at % (stream.length + 1), 0, same ? again : { ...again });
  }
  for (const order of s.replays) {
    const k = (i: number) => order[i] ?? i;
    stream.push(
      ...all
        .map((_, i) => i)
        .sort((a, b) => k(a) - k(b) || a - b)
        .map((i) => ({ ...all[i] })),
    );
  }
  for (const [r, later, amount, at] of s.lies) {
    // Anywhere in the stream: before or after the true delivery, in its batch or another one.
    const first = all[r % all.length];
    const slot = first.slot === null ? null : first.slot + later;
    stream.splice(at % (stream.length + 1), 0, receipt({ ...first, slot, amount }));
  }
  s.malformed.forEach(([kind, at], i) => stream.splice(at % (stream.length + 1), 0, malformedRow(kind, i)));
  const cuts = [...new Set(s.cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
  const bounds = [0, ...cuts, stream.length];
  const out: ApplyBatchInput[] = [];
  for (let b = 0; b + 1 < bounds.length; b++) {
    const meta = s.batches[b % s.batches.length];
    out.push({
      cluster: meta.cluster,
      source: meta.source,
      receipts: stream.slice(bounds[b], bounds[b + 1]),
      ...(meta.checkpoint === null ? {} : { checkpoint: { slot: meta.checkpoint } }),
    });
  }
  return out;
}

// ---- running both, and what is compared ----

/** A batch's result, or the error it failed with (code), as comparable JSON (amounts as decimal strings). */
type Outcome = { ok: unknown } | { failed: string };
const json = (x: unknown) => JSON.parse(JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
const failure = (e: unknown): Outcome => ({ failed: String((e as { code?: string }).code ?? (e as Error).message) });

async function runReference(db: TestDb, batches: ApplyBatchInput[]): Promise<Outcome[]> {
  const ledger = createReferenceLedger({ db: db.pool, log: silent });
  const out: Outcome[] = [];
  for (const b of batches) {
    try {
      out.push({ ok: json(await ledger.applyBatch(b)) });
    } catch (e) {
      out.push(failure(e));
      break; // a stream ends at its first failed batch (the pipeline applies nothing after it)
    }
  }
  return out;
}

async function runFast(db: TestDb, batches: ApplyBatchInput[], pipelined: boolean): Promise<Outcome[]> {
  const ledger = createLedger({ db: db.pool, log: silent });
  const out: Outcome[] = [];
  if (pipelined) {
    await applyInOrder(ledger, batches, (r: ApplyBatchResult) => out.push({ ok: json(r) })).catch((e: unknown) =>
      out.push(failure(e)),
    );
    return out;
  }
  for (const b of batches) {
    try {
      out.push({ ok: json(await ledger.applyBatch(b)) });
    } catch (e) {
      out.push(failure(e));
      break;
    }
  }
  return out;
}

async function tables(db: TestDb) {
  const q = async (sql: string) => (await db.pool.query(sql)).rows;
  const identity = `r.cluster, r.signature COLLATE "C", r.ix_index, r.inner_index`;
  return {
    receipts: await q(
      `SELECT cluster, signature, ix_index, inner_index, slot::text, block_time::text, program, kind, mint, source,
              destination, destination_owner, amount::text, invoice_id, first_source::text
         FROM receipts r ORDER BY ${identity}`,
    ),
    invoices: await q(
      `SELECT id, credited_amount::text, status::text, paid_at IS NOT NULL AS paid FROM invoices ORDER BY id`,
    ),
    exceptions: await q(
      `SELECT r.cluster, r.signature, r.ix_index, r.inner_index, e.kind::text, e.invoice_id, e.amount::text, e.detail
         FROM exceptions e JOIN receipts r ON r.id = e.receipt_id ORDER BY ${identity}, e.kind`,
    ),
    fulfilments: await q(`SELECT id, invoice_id, merchant FROM fulfilments ORDER BY id`),
    outbox: await q(
      `SELECT fulfilment_id, idempotency_key, merchant, topic, payload, state::text FROM outbox ORDER BY fulfilment_id`,
    ),
    counters: await q(
      `SELECT cluster, source::text, delivered::text, inserted::text, duplicates::text
         FROM receipt_delivery_counts ORDER BY cluster, source`,
    ),
    checkpoints: await q(`SELECT cluster, source::text, slot::text FROM checkpoints ORDER BY cluster, source`),
  };
}

async function reset(db: TestDb, s: Stream): Promise<void> {
  await db.pool.query(
    `TRUNCATE receipts, invoices, exceptions, fulfilments, outbox, receipt_delivery_counts, checkpoints
       RESTART IDENTITY CASCADE`,
  );
  // Created in id order, one statement each: the creation order (which of two open invoices at one address fills
  // first) is the same in both schemas.
  const invoices = createInvoices(db.pool);
  for (const [i, inv] of s.invoices.entries()) {
    const reference = inv.withReference || inv.deposit === null ? REFS[i] : null;
    await invoices.createInvoice({
      id: `INV-${String(i).padStart(2, '0')}`,
      mint: MINT,
      expectedAmount: inv.expected,
      depositAddress: inv.deposit,
      referenceKey: reference,
    });
  }
}

/**
 * Which of the fast ledger's paths the streams took, from the statements it sent: the probe, a batch without it
 * (its invoice lock the first statement after BEGIN), a COPY kept or rolled back, the INSERT … ON CONFLICT, a plan
 * made again on what was inserted, and the pipeline. The coverage examples below reach each of them every run.
 */
function recordPaths(db: TestDb): Record<string, number> {
  const paths: Record<string, number> = {};
  const count = (name: string) => (paths[name] = (paths[name] ?? 0) + 1);
  const kinds: Array<[string, RegExp]> = [
    ['probe', /WHERE x\.id IS NULL/],
    ['copy', /^COPY receipts/],
    ['copy rolled back', /^ROLLBACK TO SAVEPOINT ledger_copy/],
    ['insert', /^WITH u AS MATERIALIZED/],
    ['plan made again', /^UPDATE receipts r SET invoice_id/],
  ];
  const wrapped = new WeakSet<object>();
  db.pool.on('acquire', (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    let last = '';
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      const q = a[0] as { text?: unknown } | string;
      const text = (typeof q === 'string' ? q : typeof q?.text === 'string' ? q.text : '').trim();
      for (const [name, re] of kinds) if (re.test(text)) count(name);
      if (last === 'BEGIN' && /FOR UPDATE$/.test(text)) count('no probe');
      last = text;
      return query(...a);
    };
  });
  return paths;
}

/**
 * A stream that takes every path of the fast ledger, in one path (cluster localnet, source scanner): 70 new
 * receipts (probe; the path's history becomes "all new"), 35 new (no probe, one COPY), 35 new and one known (no
 * probe: the COPY meets the known one and is rolled back, the INSERT answers 35 of 36, and the plan is made again:
 * the known receipt had filled INV-01 in the first plan, so the new one to the same address moves to INV-01), the
 * whole stream again (no probe: a COPY rolled back, nothing inserted; the history becomes "mostly known"), and again
 * (the probe finds nothing new).
 */
function coverageExample(pipelined: boolean): Stream {
  const transfer = (destination: string) => ({
    destination,
    owner: null,
    reference: null,
    referenceInKeysOnly: false,
    mint: MINT,
    amount: 10n,
    inner: false,
  });
  const payer = (i: number) => (i === 5 || i === 120 ? DEPOSITS[1] : UNWATCHED[i % 2]);
  return {
    invoices: [0, 1, 2].map(() => ({ deposit: DEPOSITS[1], withReference: false, expected: 10n })),
    transactions: Array.from({ length: 140 }, (_, i) => ({ slot: BigInt(i + 1), transfers: [transfer(payer(i))] })),
    order: [],
    repeats: [[5, 140, false]],
    replays: [[], []],
    lies: [],
    malformed: [],
    cuts: [70, 105, 141, 281],
    batches: Array.from({ length: 8 }, () => ({ source: 'scanner' as const, cluster: 'localnet', checkpoint: null })),
    pipelined,
  };
}

/**
 * A source that reports one transfer at two slots in one batch, another receipt between them in chain order, on the
 * path without the probe (70 new receipts first): the case that credited one transfer twice (ledger.test.ts).
 */
function twoSlotsExample(): Stream {
  const example = coverageExample(false);
  const transfer = example.transactions[0].transfers[0];
  return {
    ...example,
    invoices: [{ deposit: DEPOSITS[1], withReference: false, expected: 1000n }],
    transactions: [
      ...Array.from({ length: 70 }, (_, i) => ({ slot: BigInt(i + 1), transfers: [transfer] })),
      { slot: 100n, transfers: [{ ...transfer, destination: DEPOSITS[1] }] },
      { slot: 101n, transfers: [transfer] },
    ],
    repeats: [],
    replays: [],
    lies: [[70, 2n, 10n, 0]],
    cuts: [70],
  };
}

describe('indexer/ledger: the fast ledger against the reference ledger (property test, fast-check)', function () {
  this.timeout(900_000);
  let fast: TestDb;
  let reference: TestDb;
  let paths: Record<string, number>;

  before(async () => {
    fast = await createTestDb('ledger_prop_fast');
    reference = await createTestDb('ledger_prop_ref');
    paths = recordPaths(fast);
  });
  after(async () => {
    await fast?.drop();
    await reference?.drop();
  });

  it('the same random streams of deliveries give the same results, rows, credits, exceptions, fulfilments, outbox rows and counters', async () => {
    let pipelined = 0;
    const property = fc.asyncProperty(streamArb, async (s) => {
      const batches = batchesOf(s);
      if (s.pipelined) pipelined += 1;
      await Promise.all([reset(fast, s), reset(reference, s)]);
      const [got, want] = await Promise.all([runFast(fast, batches, s.pipelined), runReference(reference, batches)]);
      expect(got, 'each batch: result (or error)').to.deep.equal(want);
      expect(await tables(fast), 'tables').to.deep.equal(await tables(reference));
    });
    const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31));
    // The examples run first and count among numRuns (and in a replay's FC_PATH).
    const examples: Array<[Stream]> = [[coverageExample(false)], [coverageExample(true)], [twoSlotsExample()]];
    const details = await fc.check(property, {
      numRuns: Number(process.env.FC_RUNS ?? 60) + examples.length,
      seed,
      path: process.env.FC_PATH,
      examples,
      // Shrinking a failure runs many streams: bounded, the counterexample found so far is reported.
      interruptAfterTimeLimit: Number(process.env.FC_TIME_LIMIT_MS ?? 300_000),
    });
    if (details.failed) {
      throw new Error(
        `${fc.defaultReportMessage(details)}\n${(details.errorInstance as Error)?.message ?? ''}\n` +
          `replay: FC_SEED=${details.seed} FC_PATH=${details.counterexamplePath} ` +
          `scripts/test.sh tests/indexer/ledger/reference.test.ts`,
      );
    }
    // The comparison meant something: every path of the fast ledger was taken (the examples make sure of it).
    if (process.env.FC_PATH === undefined) {
      const names = ['probe', 'no probe', 'copy', 'copy rolled back', 'insert', 'plan made again'];
      expect(
        names.filter((n) => !paths[n]),
        JSON.stringify(paths),
      ).to.deep.equal([]);
      expect(pipelined).to.be.greaterThan(0);
    }
  });
});
