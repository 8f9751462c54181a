// The fleet, measured (not a test; `make fleet`): N = 1, 2, 4 merchant APIs (`payout serve`) and N payout workers
// (`payout worker`), real processes on a pg_auto_failover formation (db/ha-formation.ts: a primary and a
// synchronous standby) and a localnet in a process of its own, given the same fixed work each time: PAYOUTS payouts
// requested through the APIs by CLIENTS concurrent clients (Idempotency-Key per payout, retried on 503/409 and on a
// refused connection, as a merchant would) and paid by the workers. Per N: throughput (payouts from the first
// request to the last success, by the database's clock) and the p99 of each payout's request-to-success time.
// Then the same work at N = CHAOS_N under chaos: every KILL_EVERY_MS a seeded random process of the fleet is killed
// with SIGKILL and a new one started in its place, and one failover (`pg_autoctl perform failover`) mid-run; exact
// totals (every acknowledged payout paid exactly once on chain, the recipients' balances summed) and the throughput
// lost to the chaos. Env: BENCH_FLEET_PAYOUTS, BENCH_FLEET_SIZES (e.g. "1,2,4"), BENCH_FLEET_SEED.
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { hashApiKey } from '../app/api/api-key-auth';
import { insertMerchant } from '../app/payout/store';
import { address } from '../app/types';
import { freePort } from '../common/free-port';
import { performFailover, startFormation, stopFormation, Formation } from '../db/ha-formation';
import { migrate, quoteIdent } from '../db/migrate';
import { createPool } from '../db/pool';
import {
  connectionIo,
  createTokenAccount,
  MerchantSetup,
  setupMerchant,
  successfulOpTransactions,
  tokenBalance,
} from '../testkit/payout/setup';
import { spawnLocalnet } from '../testkit/localnet-process';

const PAYOUTS = Number(process.env.BENCH_FLEET_PAYOUTS ?? 300);
const SIZES = (process.env.BENCH_FLEET_SIZES ?? '1,2,4').split(',').map(Number);
const SEED = Number(process.env.BENCH_FLEET_SEED ?? 29);
const CHAOS_N = 2;
const KILL_EVERY_MS = 3_000;
const CLIENTS = 16;
const AMOUNT = 1_000n;
const ROOT = path.join(__dirname, '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  kind: 'api' | 'worker';
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
    if (child.exitCode !== null || child.signalCode !== null) throw new Error('a fleet process exited while starting');
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
}

class Fleet {
  readonly members: Member[] = [];
  constructor(
    private readonly run: Run,
    private readonly rpc: string,
    private readonly authorityFile: string,
  ) {}

  /** Ports handed out so far: a port freed by one freePort() may be returned again before its process binds it. */
  private readonly used = new Set<number>();

  async add(kind: Member['kind']): Promise<Member> {
    let port = await freePort();
    while (this.used.has(port)) port = await freePort();
    this.used.add(port);
    const args =
      kind === 'api'
        ? ['payout', 'serve', '--port', String(port)]
        : [
            'payout',
            'worker',
            '--rpc',
            this.rpc,
            '--authority',
            this.authorityFile,
            '--poll-ms',
            '20',
            '--idle-ms',
            '20',
            '--metrics-port',
            String(port),
          ];
    const m = { kind, child: cli(args, { ...this.run.env, ONCEPAY_DB_CONNECT_TIMEOUT_MS: '2000' }), port };
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
    if (r && r.status !== 503 && r.status !== 409) throw new Error(`payout ${i}: ${r.status} ${await r.text()}`);
    await sleep(100);
  }
}

interface Result {
  n: number;
  chaos: boolean;
  seconds: number;
  perSecond: number;
  p99Ms: number;
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
    `bench fleet: machine ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), shared; node ${process.version}; ` +
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
    const results: Result[] = [];
    for (const n of SIZES) results.push(await measure(f.url, formation, net.rpc, m, authorityFile, n, false));
    results.push(await measure(f.url, formation, net.rpc, m, authorityFile, CHAOS_N, true));
    const calm = results.find((r) => r.n === CHAOS_N && !r.chaos);
    console.log('\nN  mode   payouts/s  p99 request→paid  wall     kills  commits/payout  commits/s  peak sessions');
    for (const r of results)
      console.log(
        `${String(r.n).padEnd(2)} ${(r.chaos ? 'chaos' : 'calm').padEnd(6)} ${r.perSecond.toFixed(1).padStart(9)}  ` +
          `${(r.p99Ms / 1000).toFixed(2).padStart(7)} s          ${r.seconds.toFixed(1).padStart(5)} s ` +
          `${String(r.kills).padStart(5)}  ${r.commitsPerPayout === undefined ? '     -' : r.commitsPerPayout.toFixed(1).padStart(6)}` +
          `          ${r.commitsPerPayout === undefined ? '    -' : (r.commitsPerPayout * r.perSecond).toFixed(0).padStart(5)}` +
          `      ${String(r.peakSessions).padStart(3)}`,
      );
    const chaos = results.find((r) => r.chaos);
    if (calm && chaos)
      console.log(
        `throughput lost to chaos (N=${CHAOS_N}): ${(100 * (1 - chaos.perSecond / calm.perSecond)).toFixed(0)} %`,
      );
  } finally {
    await net.stop();
    await stopFormation(path.join(dir, 'formation')); // also what a creation that failed half-way started
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(
  url: string,
  formation: Formation,
  rpc: string,
  m: MerchantSetup,
  authorityFile: string,
  n: number,
  chaos: boolean,
): Promise<Result> {
  const connection = new Connection(rpc, 'confirmed');
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
  const run: Run = { schema, env: { DATABASE_URL: url, ONCEPAY_DB_SCHEMA: schema }, apiKey, recipients };
  const fleet = new Fleet(run, rpc, authorityFile);
  const rnd = prng(SEED + n); // which API a request goes to
  const victims = prng(SEED); // which process each kill takes: the same sequence every run of a seed
  let kills = 0;
  try {
    await Promise.all(
      Array.from({ length: n }, () => fleet.add('api')).concat(Array.from({ length: n }, () => fleet.add('worker'))),
    );
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
    let stopChaos = false;
    const chaosLoop = (async () => {
      while (chaos && !stopChaos) {
        await sleep(KILL_EVERY_MS);
        if (stopChaos) break;
        void fleet.replace(Math.floor(victims() * fleet.members.length)).catch(() => undefined);
        kills += 1;
      }
    })();
    await Promise.all(clients);
    for (;;) {
      const { rows } = await db
        .query(
          `SELECT count(*) FILTER (WHERE state = 'succeeded')::int AS ok,
                  count(*) FILTER (WHERE state IN ('failed', 'conflict'))::int AS bad FROM payouts`,
        )
        .catch(() => ({ rows: [{ ok: -1, bad: 0 }] })); // the database away mid-failover: look again
      if (rows[0].bad > 0) throw new Error(`${rows[0].bad} payouts failed or in conflict`);
      if (rows[0].ok === PAYOUTS) break;
      await sleep(200);
    }
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
    const seconds = Number(rows[0].seconds);
    console.log(`N=${n} ${chaos ? 'chaos' : 'calm'}: ${PAYOUTS} payouts paid exactly once (checked on chain)`);
    return {
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

/** Exact totals: every payout succeeded with one successful op transaction; the recipients hold PAYOUTS × AMOUNT. */
async function checkTotals(
  db: ReturnType<typeof createPool>,
  connection: Connection,
  recipients: PublicKey[],
): Promise<void> {
  const { rows } = await db.query(`SELECT op_pda, state FROM payouts`);
  if (rows.length !== PAYOUTS) throw new Error(`${rows.length} payout rows, ${PAYOUTS} requested`);
  for (const r of rows) {
    const landed = await successfulOpTransactions(connection, r.op_pda);
    if (r.state !== 'succeeded' || landed.length !== 1)
      throw new Error(`payout at ${r.op_pda}: ${r.state}, ${landed.length} transfers`);
  }
  let total = 0n;
  for (const p of recipients) total += await tokenBalance(connection, p);
  if (total !== BigInt(PAYOUTS) * AMOUNT)
    throw new Error(`recipients hold ${total}, expected ${BigInt(PAYOUTS) * AMOUNT}`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
