// Ledger ingest throughput, side by side in one run (not a test; `make bench`):
//   ledger  createLedger().applyBatch: COPY (or INSERT … ON CONFLICT DO NOTHING), matching, credits, counters
//   copy    a plain COPY into a table of the same columns with no constraint or index (no id, created_at or
//           invoice_id either): no dedup, no matching (the ceiling)
//   naive   one INSERT … ON CONFLICT DO NOTHING per receipt, one transaction each (on a prefix: it is slow)
//   floor   (no duplicates only) the least a ledger must do and keep its guarantees: per batch, one transaction
//           that COPYs the receipts into `receipts` itself (its unique identity constraint, primary key, invoice
//           check and index) with their invoice ids, and credits the invoices in one UPDATE; the matching is
//           done before the clock starts, and there is no dedup, probe, exception or counter
//   guarantees (no duplicates only) the same COPY rows into a table that keeps only the two guarantees the schema
//           enforces for a receipt, the identity UNIQUE and the invoice check (migration 0012): no surrogate key,
//           created_at, secondary index, CHECK or credit. No ledger that keeps both can insert its rows faster
//           than this
// for a stream of N deliveries where every receipt arrives DUP times (default 200,000 and 20×), and again with
// no duplicates. Uses DATABASE_URL, else the embedded server (stopped at the end if this run started it); its own
// schema, dropped at the end.
import type { Pool, PoolClient } from 'pg';
import pino from 'pino';
import { resolveDatabaseUrl } from '../db/local-server';
import { leavingServerAsFound } from '../testkit/test-db';
import { migrate, quoteIdent } from '../db/migrate';
import { createPool } from '../db/pool';
import { applyInOrder, createLedger, type ApplyBatchInput, type Ledger } from '../indexer/ledger';
import { copyIn, receiptCopyText } from '../indexer/ledger/copy';
import { COPY_RECEIPTS } from '../indexer/ledger/queries';
import type { Receipt } from '../indexer/decode/receipt';
import type { BaseUnits } from '../common/amount';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { machineLabel } from './machine';

const N = Number(process.env.BENCH_N ?? 200_000);
const DUP = Number(process.env.BENCH_DUP ?? 20);
const BATCH = Number(process.env.BENCH_BATCH ?? 5_000);
const NAIVE_N = Number(process.env.BENCH_NAIVE_N ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const INVOICES = 2_000;

// Deterministic PRNG (mulberry32) so every run benches the same stream.
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fixed-width id, as a flat string (what JSON.parse yields; a sliced string compares and hashes slower). */
function pad(s: string, n = 44) {
  return Buffer.from((s + 'x'.repeat(n)).slice(0, n), 'latin1').toString('latin1');
}

/** `unique` distinct receipts, each delivered `dup` times, shuffled. Half go to a watched deposit address. */
function stream(unique: number, dup: number, seed: number): Receipt[] {
  const rand = rng(seed);
  const distinct: Receipt[] = [];
  for (let i = 0; i < unique; i++) {
    const watched = rand() < 0.5;
    const dest = watched ? pad(`dep${Math.floor(rand() * INVOICES)}`) : pad(`other${i}`);
    distinct.push({
      signature: pad(`sig${seed}_${Math.floor(i / 2)}`, 88),
      slot: BigInt(1_000_000 + i),
      blockTime: 1_790_000_000 + i,
      ixIndex: i % 2,
      innerIndex: -1,
      program: 'spl-token',
      kind: 'transferChecked',
      mint: pad('mintUSDC'),
      source: pad(`src${i % 1000}`),
      destination: dest,
      destinationOwner: null,
      amount: BigInt(1 + Math.floor(rand() * 1_000_000)) as BaseUnits,
    });
  }
  const out: Receipt[] = [];
  for (let d = 0; d < dup; d++) for (const r of distinct) out.push(r);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The stream in ledger batches of BATCH deliveries. */
function* batchesOf(deliveries: Receipt[]): Generator<ApplyBatchInput> {
  for (let i = 0; i < deliveries.length; i += BATCH)
    yield { cluster: 'bench', source: 'scanner', receipts: deliveries.slice(i, i + BATCH) };
}

const COLUMNS =
  'cluster, signature, ix_index, inner_index, slot, block_time, program, kind, mint, source, destination, destination_owner, amount, first_source';

function copyLine(r: Receipt): string {
  const n = (v: unknown) => (v === null || v === undefined ? '\\N' : String(v));
  return `bench\t${r.signature}\t${r.ixIndex}\t${r.innerIndex}\t${n(r.slot)}\t${n(r.blockTime)}\t${r.program}\t${r.kind}\t${n(r.mint)}\t${r.source}\t${r.destination}\t${n(r.destinationOwner)}\t${r.amount}\tscanner\n`;
}

async function main() {
  await leavingServerAsFound(() => bench(resolveDatabaseUrl()));
}

/** This run's schema, with the invoices made and the comparison tables beside `receipts`. */
interface Setup {
  pool: Pool;
  ledger: Ledger;
  /** Deposit address → invoice id, as the ledger's matching finds them (the floor matches before the clock). */
  invoiceAt: Map<string, string>;
  /** COPY_RECEIPTS into receipts_guarantees. */
  copyGuarantees: string;
  /** Whether this role may CHECKPOINT (each timed run then starts from one). */
  checkpoints: boolean;
  /** This schema's own tables, for VACUUM ANALYZE. */
  ownTables: string;
}

/** Prints the machine line; returns the short form the summary ends with. */
async function describeMachine(pool: Pool): Promise<string> {
  const { rows: v } = await pool.query(
    `SELECT current_setting('server_version') AS v, current_setting('fsync') AS f, current_setting('synchronous_commit') AS s`,
  );
  const machine = `${machineLabel()} at start, PostgreSQL ${String(v[0].v).split(' ')[0]}`;
  console.log(`machine: ${machineLabel()}, PostgreSQL ${v[0].v} (fsync=${v[0].f}, synchronous_commit=${v[0].s})`);
  return machine;
}

async function setup(pool: Pool, ledger: Ledger): Promise<Setup> {
  await pool.query(`CREATE TABLE receipts_copy AS SELECT ${COLUMNS} FROM receipts WITH NO DATA`);
  await pool.query(`CREATE TABLE receipts_guarantees AS SELECT ${COLUMNS}, invoice_id FROM receipts WITH NO DATA`);
  // The two guarantees as `receipts` keeps them (migrations 0011, 0012): the identity UNIQUE, and the invoice
  // check (the statement-level trigger that replaced the per-row foreign key).
  await pool.query(`ALTER TABLE receipts_guarantees ADD UNIQUE (cluster, signature, ix_index, inner_index)`);
  await pool.query(
    `CREATE TRIGGER receipts_guarantees_invoice_check AFTER INSERT ON receipts_guarantees
       REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION receipts_check_invoice()`,
  );
  const copyGuarantees = COPY_RECEIPTS.replace(/^COPY receipts /, 'COPY receipts_guarantees ');
  if (copyGuarantees === COPY_RECEIPTS)
    throw new OncepayError(BENCH_CODES.SETUP_FAILED, 'COPY_RECEIPTS no longer starts with "COPY receipts "');
  const invoiceAt = new Map<string, string>();
  for (let i = 0; i < INVOICES; i++) {
    await ledger.createInvoice({
      id: `B-${i}`,
      mint: pad('mintUSDC'),
      expectedAmount: 10n ** 15n,
      depositAddress: pad(`dep${i}`),
    });
    invoiceAt.set(pad(`dep${i}`), `B-${i}`);
  }

  const checkpoints = await pool.query('CHECKPOINT').then(
    () => true,
    (e: { code?: string }) => {
      if (e.code !== '42501') throw e;
      return false;
    },
  );
  console.log(
    checkpoints
      ? 'each timed run starts from a CHECKPOINT'
      : 'no CHECKPOINT before the timed runs (this role may not): a checkpoint may fall in any of them',
  );
  // VACUUM ANALYZE of this run's own schema only (a bare VACUUM would go through every table of the database).
  const { rows: own } = await pool.query<{ name: string }>(
    `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`,
  );
  return { pool, ledger, invoiceAt, copyGuarantees, checkpoints, ownTables: own.map((t) => t.name).join(', ') };
}

async function reset(s: Setup) {
  await s.pool.query(
    `TRUNCATE receipts, exceptions, fulfilments, outbox, receipt_delivery_counts, checkpoints, receipts_copy, receipts_guarantees RESTART IDENTITY CASCADE`,
  );
  await s.pool.query(`UPDATE invoices SET credited_amount = 0, status = 'open', paid_at = NULL`);
  await s.pool.query(`VACUUM ANALYZE ${s.ownTables}`);
  // Every timed run starts from a checkpoint, so none of them pays for one the run before it brought on (the
  // WAL of two or three runs reaches max_wal_size): right after a checkpoint, each index page an insert touches
  // first is written whole to the WAL once more. That costs a table with indexes (the ledger, the floor) and not
  // the plain COPY (new heap pages only), ~2.4 µs a receipt when one falls mid-run here, so which runs a
  // checkpoint happened to fall in moved the ratio. Needs superuser or pg_checkpoint; without, runs go on as
  // they come (said at the top).
  if (s.checkpoints) await s.pool.query('CHECKPOINT');
}

/**
 * The ledger over the stream: each batch awaited before the next is given (`applyBatch`, as the scanner, the
 * webhook and the subscription sources do), or pipelined (`pipeline()`, as `ingest` does: the next batch given
 * before the one before is awaited, so node prepares it while that one commits). Pushes onto `cpu` node's CPU time
 * (user + system, all of its threads: GC included) per delivery, in µs.
 */
async function timeLedger(s: Setup, deliveries: Receipt[], pipelined: boolean, cpu: number[]): Promise<number> {
  await reset(s);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  if (pipelined) await applyInOrder(s.ledger, batchesOf(deliveries));
  else for (const input of batchesOf(deliveries)) await s.ledger.applyBatch(input);
  const t = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / deliveries.length);
  return t;
}

async function timeCopy(s: Setup, deliveries: Receipt[]): Promise<number> {
  await reset(s);
  const t0 = process.hrtime.bigint();
  const client = await s.pool.connect();
  try {
    for (let i = 0; i < deliveries.length; i += BATCH) {
      const chunk = deliveries
        .slice(i, i + BATCH)
        .map(copyLine)
        .join('');
      await copyIn(client, `COPY receipts_copy (${COLUMNS}) FROM STDIN`, chunk);
    }
  } finally {
    client.release();
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** reset(), then `work` on one pooled client; its time in seconds. */
async function timedOnClient(s: Setup, work: (client: PoolClient) => Promise<void>): Promise<number> {
  await reset(s);
  const client = await s.pool.connect();
  const t0 = process.hrtime.bigint();
  try {
    await work(client);
  } finally {
    client.release();
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/**
 * The floor, or with `credit` false the guarantees alone (see the top): each batch's COPY text with invoice ids
 * and its credits per invoice, made first.
 */
async function timeFloor(s: Setup, deliveries: Receipt[], credit: boolean): Promise<number> {
  const table = credit ? 'receipts' : 'receipts_guarantees';
  const batches: { text: string; ids: string[]; credits: string[] }[] = [];
  for (let i = 0; i < deliveries.length; i += BATCH) {
    const credits = new Map<string, bigint>();
    const batch = deliveries.slice(i, i + BATCH);
    const invoiceIds = batch.map((r) => {
      const inv = s.invoiceAt.get(r.destination);
      if (inv !== undefined) credits.set(inv, (credits.get(inv) ?? 0n) + r.amount);
      return inv ?? null;
    });
    // The ledger's own COPY rows (copy.ts), in the batch's order.
    const text = receiptCopyText('bench', 'scanner', batch, invoiceIds);
    batches.push({ text, ids: [...credits.keys()], credits: [...credits.values()].map(String) });
  }
  const t = await timedOnClient(s, async (client) => {
    for (const b of batches) {
      await client.query('BEGIN');
      await copyIn(client, credit ? COPY_RECEIPTS : s.copyGuarantees, b.text);
      if (credit)
        await client.query(
          `UPDATE invoices i SET credited_amount = i.credited_amount + u.credit
             FROM unnest($1::text[], $2::numeric[]) AS u(id, credit) WHERE i.id = u.id`,
          [b.ids, b.credits],
        );
      await client.query('COMMIT');
    }
  });
  const n = (await s.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
  if (n !== deliveries.length)
    throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${table}: ${n} rows for ${deliveries.length} distinct receipts`);
  return t;
}

async function timeNaive(s: Setup, deliveries: Receipt[]): Promise<number> {
  return timedOnClient(s, async (client) => {
    for (const r of deliveries) {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO receipts (${COLUMNS}) VALUES ('bench', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'scanner')
         ON CONFLICT ON CONSTRAINT receipts_identity DO NOTHING`,
        [
          r.signature,
          r.ixIndex,
          r.innerIndex,
          r.slot?.toString() ?? null,
          r.blockTime,
          r.program,
          r.kind,
          r.mint,
          r.source,
          r.destination,
          r.destinationOwner,
          r.amount.toString(),
        ],
      );
      await client.query('COMMIT');
    }
  });
}

/** One scenario's timings: seconds per run of each way, node CPU per delivery of the ledger's runs. */
interface Timings {
  deliveries: number;
  ledgerT: number[];
  pipeT: number[];
  copyT: number[];
  floorT: number[];
  guaranteesT: number[];
  cpu: Record<'awaited' | 'pipelined', number[]>;
  naive: { n: number; t: number };
  /** What each ledger run kept (the same every time, or the bench throws). */
  kept: string | undefined;
}

/** The ledger's rows, credits and exceptions after a run, as one line. */
async function keptBy(pool: Pool): Promise<string> {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*) FROM receipts) AS n, (SELECT sum(credited_amount) FROM invoices) AS credited,
            (SELECT count(*) FROM exceptions) AS exceptions`,
  );
  return `${rows[0].n} distinct rows, ${rows[0].credited} credited, ${rows[0].exceptions} exceptions`;
}

async function measure(s: Setup, dup: number): Promise<Timings> {
  const deliveries = stream(Math.ceil(N / dup), dup, dup);
  // Alternate the fast paths ROUNDS times (5: on a shared machine identical runs differ by 15 % and more) and keep
  // the best of each: other work on the machine is noise.
  const r: Timings = {
    deliveries: deliveries.length,
    ledgerT: [],
    pipeT: [],
    copyT: [],
    floorT: [],
    guaranteesT: [],
    cpu: { awaited: [], pipelined: [] },
    naive: { n: 0, t: 0 },
    kept: undefined,
  };
  // Both ways must keep the same rows and credit the same money (a bench of a wrong ledger measures nothing).
  const keep = async (how: string) => {
    const got = await keptBy(s.pool);
    if (r.kept !== undefined && got !== r.kept)
      throw new OncepayError(BENCH_CODES.CHECK_FAILED, `ledger ${how} kept ${got}, before ${r.kept}`);
    r.kept = got;
  };
  for (let round = 0; round < ROUNDS; round++) {
    r.ledgerT.push(await timeLedger(s, deliveries, false, r.cpu.awaited));
    await keep('awaited');
    r.pipeT.push(await timeLedger(s, deliveries, true, r.cpu.pipelined));
    await keep('pipelined');
    r.copyT.push(await timeCopy(s, deliveries));
    if (dup === 1) {
      r.floorT.push(await timeFloor(s, deliveries, true));
      r.guaranteesT.push(await timeFloor(s, deliveries, false));
    }
  }
  const naiveSlice = deliveries.slice(0, NAIVE_N);
  r.naive = { n: naiveSlice.length, t: await timeNaive(s, naiveSlice) };
  return r;
}

/** Prints one scenario's table; returns its summary line and, with no duplicates, the floor's. */
function report(label: string, dup: number, r: Timings): { summary: string; floor?: string } {
  const rate = (t: number) => Math.round(t).toLocaleString('en');
  const runs = (ts: number[]) => ts.map((t) => t.toFixed(2)).join(' / ');
  const ledgerRate = r.deliveries / Math.min(...r.ledgerT);
  const pipeRate = r.deliveries / Math.min(...r.pipeT);
  const copyRate = r.deliveries / Math.min(...r.copyT);
  const naiveRate = r.naive.n / r.naive.t;
  console.log(
    `\n[${label}] ${r.deliveries} deliveries of ${Math.ceil(N / dup)} distinct receipts, batches of ${BATCH}`,
  );
  console.log(
    `  ledger, each batch awaited              ${rate(ledgerRate)} receipts/s  (best of ${runs(r.ledgerT)} s)`,
  );
  console.log(`    node CPU per delivery                 ${r.cpu.awaited.map((c) => c.toFixed(1)).join(' / ')} µs`);
  console.log(`  ledger, pipelined (next batch given)    ${rate(pipeRate)} receipts/s  (best of ${runs(r.pipeT)} s)`);
  console.log(`    node CPU per delivery                 ${r.cpu.pipelined.map((c) => c.toFixed(1)).join(' / ')} µs`);
  console.log(`  COPY, no dedup (ceiling)                ${rate(copyRate)} receipts/s  (best of ${runs(r.copyT)} s)`);
  const floorRate = r.floorT.length > 0 ? r.deliveries / Math.min(...r.floorT) : 0;
  const guaranteesRate = r.guaranteesT.length > 0 ? r.deliveries / Math.min(...r.guaranteesT) : 0;
  if (r.floorT.length > 0) {
    console.log(
      `  floor: COPY into receipts + credit       ${rate(floorRate)} receipts/s  (best of ${runs(r.floorT)} s)`,
    );
    console.log(
      `  guarantees alone: UNIQUE + invoice check ${rate(guaranteesRate)} receipts/s  (best of ${runs(r.guaranteesT)} s)`,
    );
  }
  console.log(
    `  naive, one row per transaction          ${rate(naiveRate)} receipts/s  (${r.naive.n} deliveries, ${r.naive.t.toFixed(2)} s)`,
  );
  console.log(
    `  ratio ledger/COPY = ${(ledgerRate / copyRate).toFixed(2)} awaited, ${(pipeRate / copyRate).toFixed(2)} pipelined   ledger/naive = ${(ledgerRate / naiveRate).toFixed(1)}x   (each run kept ${r.kept})`,
  );
  const summary = `${label}: ${(ledgerRate / copyRate).toFixed(2)} awaited, ${(pipeRate / copyRate).toFixed(2)} pipelined (${rate(ledgerRate)} / ${rate(pipeRate)} vs ${rate(copyRate)} receipts/s)`;
  if (r.floorT.length === 0) return { summary };
  const floor =
    `floor: COPY + unique index + credit = ${(floorRate / copyRate).toFixed(2)}× COPY (${rate(floorRate)} receipts/s; ledger/floor = ${(ledgerRate / floorRate).toFixed(2)} awaited, ${(pipeRate / floorRate).toFixed(2)} pipelined)\n` +
    `  guarantees alone (identity UNIQUE + invoice check, nothing else) = ${(guaranteesRate / copyRate).toFixed(2)}× COPY (${rate(guaranteesRate)} receipts/s)`;
  return { summary, floor };
}

async function bench(url: string) {
  const schema = `bench_ingest_${process.pid}`;
  const admin = createPool({ url, max: 1 });
  await migrate(admin, { schema });
  await admin.end();
  const pool = createPool({ url, schema, max: 4 });
  const log = pino({ level: 'silent' });
  try {
    const machine = await describeMachine(pool);
    const s = await setup(pool, createLedger({ db: pool, log }));
    const summary: string[] = [];
    let floor = '';
    const scenarios = [
      [`${DUP}x duplicates`, DUP],
      ['no duplicates', 1],
    ] as const;
    for (const [label, dup] of scenarios.slice(0, process.env.BENCH_DUP_ONLY ? 1 : 2)) {
      const r = report(label, dup, await measure(s, dup));
      summary.push(r.summary);
      if (r.floor) floor = r.floor;
    }
    console.log(`\nledger/COPY side by side, ${machine}:\n  ${summary.join('   |   ')}`);
    if (floor) console.log(`  ${floor}`);
  } finally {
    await pool.end();
    const a = createPool({ url, max: 1 });
    await a.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
    await a.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
