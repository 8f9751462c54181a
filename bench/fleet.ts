// The fleet, measured (not a test; `make fleet`): N = 1, 2, 4 merchant APIs (`payout serve`), N payout workers
// (`payout worker`) and N stream sources (`indexer stream --ws`), real processes on a pg_auto_failover formation
// (db/ha-formation.ts: a primary and a synchronous standby) and a localnet in a process of its own, given the same
// fixed work each time: PAYOUTS payouts requested through the APIs by CLIENTS concurrent clients (Idempotency-Key
// per payout, retried on 503/409 and on a refused connection, as a merchant would) and paid by the workers, and at
// the same time TRANSFERS token transfers by PAYERS concurrent payers, each paying one invoice in full, which the
// stream sources must bring into the ledger. Per N: payout throughput (from the first request to the last success,
// by the database's clock) and the p99 of each payout's request-to-success time; credit throughput (from the first
// transfer sent to the last invoice paid) and the p99 of each transfer's send-to-credit time. Then the same work at
// N = CHAOS_N under chaos: every KILL_EVERY_MS a seeded random process of the fleet (API, worker or stream source)
// is killed with SIGKILL and a new one started in its place, and one failover (`pg_autoctl perform failover`)
// mid-run; exact totals (every acknowledged payout paid exactly once on chain, the recipients' balances summed;
// every transfer stored once, every invoice credited exactly its amount) and the throughput lost to the chaos.
// Env: BENCH_FLEET_PAYOUTS, BENCH_FLEET_TRANSFERS, BENCH_FLEET_SIZES (e.g. "1,2,4"), BENCH_FLEET_SEED.
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { hashApiKey } from '../app/api/api-key-auth';
import { insertMerchant } from '../app/merchant/store';
import { address } from '../app/types';
import { freePort } from '../common/free-port';
import { performFailover, startFormation, stopFormation, Formation } from '../db/ha-formation';
import { migrate, quoteIdent } from '../db/migrate';
import { createPool } from '../db/pool';
import { createLedger } from '../indexer/ledger';
import { airdrop, mintWithSource, send } from '../testkit/cluster';
import {
  connectionIo,
  createTokenAccount,
  MerchantSetup,
  setupMerchant,
  successfulOpTransactions,
  tokenBalance,
} from '../testkit/payout/setup';
import { spawnLocalnet } from '../testkit/localnet-process';
import { quantile } from '../testkit/quantile';
import { sleep } from '../common/sleep';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { machineLabel } from './machine';

const PAYOUTS = Number(process.env.BENCH_FLEET_PAYOUTS ?? 300);
const TRANSFERS = Number(process.env.BENCH_FLEET_TRANSFERS ?? 300);
const PAYERS = 8;
const DECIMALS = 6;
const SIZES = (process.env.BENCH_FLEET_SIZES ?? '1,2,4').split(',').map(Number);
const SEED = Number(process.env.BENCH_FLEET_SEED ?? 29);
const CHAOS_N = 2;
const KILL_EVERY_MS = 3_000;
const CLIENTS = 16;
const AMOUNT = 1_000n;
const ROOT = path.join(__dirname, '..');

/** mulberry32: a seeded PRNG, so a chaos run's kills can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Member {
  kind: 'api' | 'worker' | 'stream';
  child: ChildProcess;
  port: number;
}

/** The compiled CLI when `make build` made it (faster starts), else the source through ts-node. */
function cli(args: string[], env: Record<string, string>): ChildProcess {
  const built = path.join(ROOT, 'dist', 'cli', 'main.js');
  const entry = fs.existsSync(built) ? built : path.join(ROOT, 'bin', 'oncepay');
  return spawn(process.execPath, [entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, ONCEPAY_LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
}

async function ready(port: number, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new OncepayError(BENCH_CODES.SETUP_FAILED, 'a fleet process exited while starting');
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
}

interface Run {
  schema: string;
  env: Record<string, string>;
  apiKey: string;
  recipients: PublicKey[];
  /** The first slot the stream sources read when no checkpoint exists yet (before the first invoice's transfer). */
  fromSlot: number;
}

/** The localnet's endpoints a fleet member is pointed at. */
interface Node {
  rpc: string;
  ws: string;
}

class Fleet {
  readonly members: Member[] = [];
  constructor(
    private readonly run: Run,
    private readonly node: Node,
    private readonly authorityFile: string,
  ) {}

  private args(kind: Member['kind'], port: number): string[] {
    const metrics = ['--metrics-port', String(port)];
    if (kind === 'api') return ['payout', 'serve', '--port', String(port)];
    if (kind === 'worker')
      return [
        ...['payout', 'worker', '--rpc', this.node.rpc, '--authority', this.authorityFile],
        ...['--poll-ms', '20', '--idle-ms', '20', ...metrics],
      ];
    return [
      ...['indexer', 'stream', '--ws', this.node.ws, '--rpc', this.node.rpc, '--cluster', 'localnet'],
      ...['--from-slot', String(this.run.fromSlot), '--refresh-ms', '500', '--ping-ms', '1000', ...metrics],
    ];
  }

  /** Ports handed out so far: a port freed by one freePort() may be returned again before its process binds it. */
  private readonly used = new Set<number>();

  async add(kind: Member['kind']): Promise<Member> {
    let port = await freePort();
    while (this.used.has(port)) port = await freePort();
    this.used.add(port);
    const env = { ...this.run.env, ONCEPAY_DB_CONNECT_TIMEOUT_MS: '2000' };
    const m = { kind, child: cli(this.args(kind, port), env), port };
    this.members.push(m);
    await ready(port, m.child);
    return m;
  }

  apis(): Member[] {
    return this.members.filter((m) => m.kind === 'api' && m.child.exitCode === null && m.child.signalCode === null);
  }

  /** SIGKILL of member `i`, and a new one of its kind in its place (not awaited: the work goes on meanwhile). */
  replace(i: number): Promise<Member> {
    const [m] = this.members.splice(i, 1);
    m.child.kill('SIGKILL');
    return this.add(m.kind);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.members.map(
        (m) =>
          new Promise<void>((resolve) => {
            if (m.child.exitCode !== null || m.child.signalCode !== null) return resolve();
            m.child.once('exit', () => resolve());
            m.child.kill('SIGKILL');
          }),
      ),
    );
  }
}

/** Requests payout `i` until an API answers 2xx; returns when it did. */
async function request(fleet: Fleet, run: Run, mint: PublicKey, i: number, rnd: () => number): Promise<void> {
  // Ids unique per run: one merchant pays every run, and an op id comes from the merchant and the payout id.
  const payoutId = `${run.schema}-${i}`;
  for (;;) {
    const apis = fleet.apis();
    const api = apis[Math.floor(rnd() * apis.length)];
    if (!api) {
      await sleep(50);
      continue;
    }
    const r = await fetch(`http://127.0.0.1:${api.port}/v1/payouts`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${run.apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': payoutId,
      },
      body: JSON.stringify({
        payoutId,
        recipient: run.recipients[i].toBase58(),
        mint: mint.toBase58(),
        amount: String(AMOUNT),
      }),
    }).catch(() => undefined); // a killed API: try another
    if (r && (r.status === 200 || r.status === 201)) return;
    if (r && r.status !== 503 && r.status !== 409)
      throw new OncepayError(BENCH_CODES.CHECK_FAILED, `payout ${i}: ${r.status} ${await r.text()}`);
    await sleep(100);
  }
}

interface Result {
  n: number;
  chaos: boolean;
  seconds: number;
  perSecond: number;
  p99Ms: number;
  /** Transfers credited per second, from the first transfer sent to the last invoice paid. */
  creditsPerSecond: number;
  /** The p99 of a transfer's send-to-credit time (the invoice's paid_at, same machine's clock). */
  creditP99Ms: number;
  kills: number;
  /** Transactions committed on the primary per payout (calm runs: the counter is the node's own). */
  commitsPerPayout?: number;
  /** The most client sessions seen on the primary at once (sampled every 500 ms). */
  peakSessions: number;
}

/** The primary's committed transactions so far (pg_stat_database), for the commits a payout costs. */
async function commits(db: ReturnType<typeof createPool>): Promise<number> {
  const { rows } = await db.query(
    `SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = current_database()`,
  );
  return Number(rows[0].n);
}

/** Samples the primary's client sessions every 500 ms until stopped; resolves to the peak. */
function sessionPeak(db: ReturnType<typeof createPool>): { stop(): Promise<number> } {
  let peak = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const r = await db
        .query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'`)
        .catch(() => undefined);
      if (r) peak = Math.max(peak, r.rows[0].n);
      await sleep(500);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return peak;
    },
  };
}

async function main(): Promise<void> {
  console.log(
    `bench fleet: machine ${machineLabel()} (shared); ` +
      `${PAYOUTS} payouts per run, ${CLIENTS} clients, seed ${SEED}`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-fleet-'));
  fs.chmodSync(dir, 0o755);
  let formation: Formation | undefined;
  const net = await spawnLocalnet({ slotMs: 10 });
  try {
    const started = Date.now();
    const f = await startFormation(path.join(dir, 'formation'));
    formation = f.formation;
    console.log(
      `formation (monitor, primary, synchronous standby) up in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    const connection = new Connection(net.rpc, 'confirmed');
    const m = await setupMerchant(connectionIo(connection));
    const authorityFile = path.join(dir, 'authority.json');
    fs.writeFileSync(authorityFile, JSON.stringify([...m.authority.secretKey]), { mode: 0o600 });
    const payer = await setupPayer(connection);
    const setup: Setup = { url: f.url, formation, node: { rpc: net.rpc, ws: net.ws }, m, authorityFile, payer };
    const results: Result[] = [];
    for (const n of SIZES) results.push(await measure(setup, n, false));
    results.push(await measure(setup, CHAOS_N, true));
    printResults(results);
  } finally {
    await net.stop();
    await stopFormation(path.join(dir, 'formation')); // also what a creation that failed half-way started
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function printResults(results: Result[]): void {
  console.log(
    '\nN  mode   payouts/s  p99 request→paid  wall     kills  commits/payout  commits/s  peak sessions' +
      '  credits/s  p99 send→credited',
  );
  for (const r of results)
    console.log(
      `${String(r.n).padEnd(2)} ${(r.chaos ? 'chaos' : 'calm').padEnd(6)} ${r.perSecond.toFixed(1).padStart(9)}  ` +
        `${(r.p99Ms / 1000).toFixed(2).padStart(7)} s          ${r.seconds.toFixed(1).padStart(5)} s ` +
        `${String(r.kills).padStart(5)}  ${r.commitsPerPayout === undefined ? '     -' : r.commitsPerPayout.toFixed(1).padStart(6)}` +
        `          ${r.commitsPerPayout === undefined ? '    -' : (r.commitsPerPayout * r.perSecond).toFixed(0).padStart(5)}` +
        `      ${String(r.peakSessions).padStart(3)}` +
        `        ${r.creditsPerSecond.toFixed(1).padStart(6)}  ${(r.creditP99Ms / 1000).toFixed(2).padStart(7)} s`,
    );
  const calm = results.find((r) => r.n === CHAOS_N && !r.chaos);
  const chaos = results.find((r) => r.chaos);
  if (calm && chaos)
    console.log(
      `throughput lost to chaos (N=${CHAOS_N}): payouts ${(100 * (1 - chaos.perSecond / calm.perSecond)).toFixed(0)} %, ` +
        `credits ${(100 * (1 - chaos.creditsPerSecond / calm.creditsPerSecond)).toFixed(0)} %`,
    );
}

/** What every run shares: the formation, the node, the paying-out merchant and the paying customer. */
interface Setup {
  url: string;
  formation: Formation;
  node: Node;
  m: MerchantSetup;
  authorityFile: string;
  payer: Payer;
}

/** The customer who pays the invoices: a funded wallet holding a token of its own mint. */
interface Payer {
  keypair: Keypair;
  mint: PublicKey;
  source: PublicKey;
}

async function setupPayer(connection: Connection): Promise<Payer> {
  const keypair = Keypair.generate();
  await airdrop(connection, keypair.publicKey, 100_000_000_000);
  const { mint, source } = await mintWithSource(connection, keypair, DECIMALS, 1n << 62n);
  return { keypair, mint, source };
}

/** One invoice per transfer: a deposit wallet of its own, its associated token account, its amount. */
interface Invoice {
  id: string;
  ata: PublicKey;
  amount: bigint;
  sentAt?: number;
  signature?: string;
}

/** TRANSFERS invoices in the run's schema, their deposit wallets' token accounts created on chain. */
async function createInvoices(db: ReturnType<typeof createPool>, connection: Connection, p: Payer, schema: string) {
  const ledger = createLedger({ db });
  const invoices: Invoice[] = [];
  for (let start = 0; start < TRANSFERS; start += 8) {
    const wallets = Array.from({ length: Math.min(8, TRANSFERS - start) }, () => Keypair.generate().publicKey);
    const atas = wallets.map((w) => getAssociatedTokenAddressSync(p.mint, w));
    await send(
      connection,
      wallets.map((w, k) => createAssociatedTokenAccountIdempotentInstruction(p.keypair.publicKey, atas[k], w, p.mint)),
      [p.keypair],
    );
    for (let k = 0; k < wallets.length; k++) {
      const i = start + k;
      const inv = { id: `${schema}-inv-${i}`, ata: atas[k], amount: BigInt(1_000 + i) };
      await ledger.createInvoice({
        id: inv.id,
        mint: p.mint.toBase58(),
        expectedAmount: inv.amount,
        depositAddress: wallets[k].toBase58(),
      });
      invoices.push(inv);
    }
  }
  return invoices;
}

/** Pays `inv` in full with one transfer (sent until the node takes it; confirmed by the caller's wait for credit). */
async function pay(connection: Connection, p: Payer, inv: Invoice): Promise<void> {
  for (;;) {
    try {
      const { blockhash } = await connection.getLatestBlockhash();
      const tx = new Transaction({ feePayer: p.keypair.publicKey, recentBlockhash: blockhash }).add(
        createTransferCheckedInstruction(p.source, p.mint, inv.ata, p.keypair.publicKey, inv.amount, DECIMALS),
      );
      tx.sign(p.keypair);
      inv.sentAt = Date.now();
      inv.signature = await connection.sendRawTransaction(tx.serialize());
      await connection.confirmTransaction(inv.signature, 'confirmed');
      return;
    } catch {
      await sleep(100);
    }
  }
}

async function measure(setup: Setup, n: number, chaos: boolean): Promise<Result> {
  const { url, formation, node, m, authorityFile, payer } = setup;
  const connection = new Connection(node.rpc, 'confirmed');
  const schema = `fleet_${n}_${chaos ? 'chaos' : 'calm'}_${process.pid}`;
  const admin = createPool({ url, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  await migrate(admin, { schema });
  await admin.end();
  const db = createPool({ url, schema, max: 2 });
  const apiKey = `fleet-key-${schema}`;
  await insertMerchant(db, {
    name: 'fleet',
    apiKeyHash: hashApiKey(apiKey),
    programId: address(m.programId),
    merchantAddress: address(m.merchant),
    vault: address(m.vault),
  });
  const recipients: PublicKey[] = [];
  for (let i = 0; i < PAYOUTS; i++)
    recipients.push(
      await createTokenAccount(connectionIo(connection), m.authority, m.mint, Keypair.generate().publicKey),
    );
  const fromSlot = await connection.getSlot('finalized');
  const invoices = await createInvoices(db, connection, payer, schema);
  const run: Run = { schema, env: { DATABASE_URL: url, ONCEPAY_DB_SCHEMA: schema }, apiKey, recipients, fromSlot };
  const fleet = new Fleet(run, node, authorityFile);
  const rnd = prng(SEED + n); // which API a request goes to
  const victims = prng(SEED); // which process each kill takes: the same sequence every run of a seed
  let kills = 0;
  try {
    const kinds: Member['kind'][] = ['api', 'worker', 'stream'];
    await Promise.all(kinds.flatMap((kind) => Array.from({ length: n }, () => fleet.add(kind))));
    const committedBefore = await commits(db);
    const sessions = sessionPeak(db);
    let next = 0;
    let acknowledged = 0;
    let failover: Promise<unknown> | undefined;
    const clients = Array.from({ length: CLIENTS }, async () => {
      for (let i = next++; i < PAYOUTS; i = next++) {
        await request(fleet, run, m.mint, i, rnd);
        acknowledged += 1;
        if (chaos && !failover && acknowledged >= PAYOUTS / 2) failover = performFailover(formation);
      }
    });
    let nextInvoice = 0;
    const payers = Array.from({ length: PAYERS }, async () => {
      for (let i = nextInvoice++; i < invoices.length; i = nextInvoice++) await pay(connection, payer, invoices[i]);
    });
    let stopChaos = false;
    const chaosLoop = (async () => {
      while (chaos && !stopChaos) {
        await sleep(KILL_EVERY_MS);
        if (stopChaos) break;
        void fleet.replace(Math.floor(victims() * fleet.members.length)).catch(() => undefined);
        kills += 1;
      }
    })();
    await Promise.all([...clients, ...payers]);
    for (;;) {
      const { rows } = await db
        .query(
          `SELECT count(*) FILTER (WHERE state = 'succeeded')::int AS ok,
                  count(*) FILTER (WHERE state IN ('failed', 'conflict'))::int AS bad FROM payouts`,
        )
        .catch(() => ({ rows: [{ ok: -1, bad: 0 }] })); // the database away mid-failover: look again
      if (rows[0].bad > 0)
        throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${rows[0].bad} payouts failed or in conflict`);
      if (rows[0].ok === PAYOUTS) break;
      await sleep(200);
    }
    const paidAt = await allPaid(db, invoices);
    const committed = (await commits(db)) - committedBefore;
    const peakSessions = await sessions.stop();
    stopChaos = true;
    await chaosLoop;
    await failover;
    const { rows } = await db.query(
      `SELECT extract(epoch FROM max(finished_at) - min(created_at))::float8 AS seconds,
              percentile_disc(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at))::float8 AS p99
         FROM payouts`,
    );
    await checkTotals(db, connection, recipients);
    await checkCredits(db, invoices);
    const seconds = Number(rows[0].seconds);
    console.log(
      `N=${n} ${chaos ? 'chaos' : 'calm'}: ${PAYOUTS} payouts paid exactly once (checked on chain), ` +
        `${TRANSFERS} transfers credited exactly once`,
    );
    const firstSent = Math.min(...invoices.map((inv) => inv.sentAt!));
    const creditMs = invoices.map((inv) => paidAt.get(inv.id)! - inv.sentAt!).sort((a, b) => a - b);
    return {
      creditsPerSecond: TRANSFERS / ((Math.max(...paidAt.values()) - firstSent) / 1000),
      creditP99Ms: quantile(creditMs, 0.99),
      n,
      chaos,
      seconds,
      perSecond: PAYOUTS / seconds,
      p99Ms: Number(rows[0].p99) * 1000,
      kills,
      commitsPerPayout: chaos ? undefined : committed / PAYOUTS,
      peakSessions,
    };
  } finally {
    await fleet.stop();
    await db.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`).catch(() => undefined);
    await db.end();
  }
}

/** Waits until every invoice is paid (the stream sources brought its transfer in); their paid_at in ms. */
async function allPaid(db: ReturnType<typeof createPool>, invoices: Invoice[]): Promise<Map<string, number>> {
  const ids = invoices.map((inv) => inv.id);
  for (;;) {
    const r = await db
      .query(
        `SELECT id, (extract(epoch FROM paid_at) * 1000)::float8 AS ms FROM invoices WHERE id = ANY($1) AND status = 'paid'`,
        [ids],
      )
      .catch(() => undefined); // the database away mid-failover: look again
    if (r && r.rows.length === ids.length) return new Map(r.rows.map((row) => [row.id as string, Number(row.ms)]));
    await sleep(200);
  }
}

/** Exact totals of the getting-paid side: each transfer stored once under its own signature, each invoice credited
 * exactly its amount, no receipt that is not one of the transfers. */
async function checkCredits(db: ReturnType<typeof createPool>, invoices: Invoice[]): Promise<void> {
  const { rows } = await db.query(`SELECT signature, invoice_id, amount::text AS amount FROM receipts`);
  if (rows.length !== invoices.length)
    throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${rows.length} receipts, ${invoices.length} transfers`);
  const bySignature = new Map(rows.map((r) => [r.signature as string, r]));
  for (const inv of invoices) {
    const r = bySignature.get(inv.signature!);
    if (!r || r.invoice_id !== inv.id || BigInt(r.amount) !== inv.amount)
      throw new OncepayError(
        BENCH_CODES.CHECK_FAILED,
        `transfer ${inv.signature} to ${inv.id}: ${JSON.stringify(r ?? null)}`,
      );
  }
  const { rows: credited } = await db.query(
    `SELECT count(*)::int AS n FROM invoices WHERE status = 'paid' AND credited_amount = expected_amount`,
  );
  if (credited[0].n !== invoices.length)
    throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${credited[0].n} invoices credited exactly`);
}

/** Exact totals: every payout succeeded with one successful op transaction; the recipients hold PAYOUTS × AMOUNT. */
async function checkTotals(
  db: ReturnType<typeof createPool>,
  connection: Connection,
  recipients: PublicKey[],
): Promise<void> {
  const { rows } = await db.query(`SELECT op_pda, state FROM payouts`);
  if (rows.length !== PAYOUTS)
    throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${rows.length} payout rows, ${PAYOUTS} requested`);
  for (const r of rows) {
    const landed = await successfulOpTransactions(connection, r.op_pda);
    if (r.state !== 'succeeded' || landed.length !== 1)
      throw new OncepayError(BENCH_CODES.CHECK_FAILED, `payout at ${r.op_pda}: ${r.state}, ${landed.length} transfers`);
  }
  let total = 0n;
  for (const p of recipients) total += await tokenBalance(connection, p);
  if (total !== BigInt(PAYOUTS) * AMOUNT)
    throw new OncepayError(BENCH_CODES.CHECK_FAILED, `recipients hold ${total}, expected ${BigInt(PAYOUTS) * AMOUNT}`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
