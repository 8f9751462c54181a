// Payout throughput end to end, side by side in one run (not a test; `make bench`):
//   worker   createPayout (what the API stores) while a payout worker pool (app/payout/worker.ts) at CONCURRENCY
//            slots claims and executes them: claim + advisory lock in one statement,
//            attempt persisted before the send, status polling, result recorded, unlock (`oncepay payout worker`)
//   journal  createPayout + runPayout called directly, CONCURRENCY at a time (the SDK as a library)
//   direct   the same execute_payout transactions built, signed, sent and polled to `confirmed` without any
//            database (what the journal costs is the difference)
// The worker and direct do the same chain work but for what the journal adds: the same PayoutChain, the same
// settle commitment (`confirmed`), the same poll interval, and the same chain policy — direct goes through
// shareChainCalls as the worker's slots do (one recent blockhash per BLOCKHASH_MAX_AGE_MS, status looks merged
// while one is in flight, the pause between looks riding on the others' status calls), so neither is measured on
// a cheaper chain path than the other. What only the worker
// does: the API's insert (createPayout: counted, the worker pays what the API stored), the claim, the attempt
// journaled (a durable commit) before its send, and the landed finish (a first attempt reads no op account: journal
// rule 1; a payout that signs again after an expiry reads it at `finalized` first). The journal mode is the library (runPayout) and uses the chain as given, unshared.
// On three banks: solana-bankrun (in-process, so the database share shows), and the localnet (JSON-RPC over
// LiteSVM, slots of BENCH_SLOT_MS) in a process of its own (as a real node is: the deployed topology) and in this
// process. The in-process localnet is not a deployed topology: node and client share one event loop, so every
// round trip of the worker (database or chain) waits behind the node's block production and the node's work
// waits behind the client's; its ratio is printed for comparison with earlier runs, not as the target.
// Rounds alternate worker/journal/direct; medians are printed.
// Uses DATABASE_URL, else the embedded server (stopped at the end if this run started it); its own schema, dropped
// at the end. BENCH_PAYOUT_BANKS=bankrun,in-process,own-process picks banks; BENCH_PAYOUT_PROFILE=1 prints, per mode
// and round, the count and summed latency of every SQL statement and chain call (where a payout's time goes);
// BENCH_PAYOUT_CPU_PROFILE=<dir> writes a V8 CPU profile of each measured round. Each bank's line also gives the CPU
// one payout cost per mode in this process, in the embedded PostgreSQL and in the bank's own process (from /proc):
// on two shared cores the ratio follows those sums more than any round trip, and they move less with the load.
import { Session } from 'inspector/promises';
import * as fs from 'fs';
import * as path from 'path';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { Client, Pool } from 'pg';
import { defaultDataDir, resolveDatabaseUrl } from '../db/local-server';
import { migrate, quoteIdent } from '../db/migrate';
import { createPool } from '../db/pool';
import { hashApiKey } from '../app/api/api-key-auth';
import { buildAttemptTransaction } from '../app/payout/build-attempt';
import { PayoutChain, SignatureStatus, createConnectionChain } from '../app/payout/chain';
import { createPayout, preparePayout } from '../app/payout/create-payout';
import { runPayout } from '../app/payout/run-payout';
import { shareChainCalls } from '../app/payout/shared-chain';
import { DEFAULT_BLOCKHASH_MAX_AGE_MS, startPayoutWorker } from '../app/payout/worker';
import { ONCEPAY_PROGRAM_ID } from '../app/program/idl';
import { MerchantRow, insertMerchant } from '../app/merchant/store';
import { address } from '../app/types';
import { startLocalnet } from '../localnet';
import { bankrunChain, bankrunIo, startBankrun } from '../testkit/payout/bankrun-chain';
import { requireProgramSo } from '../common/program-binary';
import { MerchantSetup, SetupIo, connectionIo, createTokenAccount, setupMerchant } from '../testkit/payout/setup';
import { spawnLocalnet } from '../testkit/localnet-process';
import { leavingServerAsFound } from '../testkit/test-db';
import { sleep } from '../common/sleep';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { machineLabel } from './machine';

// 100 × (3 rounds × 3 modes) + warm-up stays under the ~1,400 transactions after which bankrun retires blockhashes
// (the journal survives that, see testkit/payout/bankrun-chain.ts; the direct baseline would not).
const N = Number(process.env.BENCH_PAYOUT_N ?? 100);
const CONCURRENCY = Number(process.env.BENCH_PAYOUT_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_PAYOUT_ROUNDS ?? 3);
const SLOT_MS = Number(process.env.BENCH_SLOT_MS ?? 10);
const POLL_MS = 5;
// How long the worker's slots, and the direct sender's, sign on one recent blockhash (the worker's default).
const BLOCKHASH_MAX_AGE_MS = Number(process.env.BENCH_PAYOUT_BLOCKHASH_MAX_AGE_MS ?? DEFAULT_BLOCKHASH_MAX_AGE_MS);
// A worker slot that found nothing due waits this long (a claim that finds work wakes the next slot at once).
const IDLE_MS = 50;
// A stuck payout fails the bench loudly instead of hanging it.
const DEADLINE_MS = Number(process.env.BENCH_PAYOUT_DEADLINE_MS ?? 120_000);

process.env.ONCEPAY_LOG_LEVEL ??= 'error';

async function inParallel<T>(items: T[], n: number, f: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await f(items[next++]);
    }),
  );
}

/** BENCH_PAYOUT_PROFILE: summed latency per kind of call (SQL statement by its start, chain method). */
const profile = process.env.BENCH_PAYOUT_PROFILE === '1' ? new Map<string, { n: number; ms: number }>() : undefined;

function record(kind: string, ms: number): void {
  const s = profile!.get(kind) ?? { n: 0, ms: 0 };
  s.n += 1;
  s.ms += ms;
  profile!.set(kind, s);
}

/** Times every promise-returning query of every pg client in this process (the bench's own statements too). */
function profileSql(): void {
  const proto = Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...a: unknown[]) {
    const q = a[0] as string | { text?: string };
    const kind = `sql ${(typeof q === 'string' ? q : (q?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 70)}`;
    const t0 = performance.now();
    const r = query.apply(this, a) as Promise<unknown> | undefined;
    const done = () => record(kind, performance.now() - t0);
    r?.then?.(done, done);
    return r;
  };
}

function profileChain(c: PayoutChain): PayoutChain {
  const timed =
    <A extends unknown[], R>(kind: string, f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const t0 = performance.now();
      try {
        return await f(...a);
      } finally {
        record(`chain ${kind}`, performance.now() - t0);
      }
    };
  return {
    latestBlockhash: timed('latestBlockhash', () => c.latestBlockhash()),
    sendRawTransaction: timed('sendRawTransaction', (b: Uint8Array) => c.sendRawTransaction(b)),
    signatureStatuses: timed('signatureStatuses', (s: Parameters<PayoutChain['signatureStatuses']>[0]) =>
      c.signatureStatuses(s),
    ),
    blockhashExpired: timed('blockhashExpired', (l: Parameters<PayoutChain['blockhashExpired']>[0]) =>
      c.blockhashExpired(l),
    ),
    getOpAccount: timed('getOpAccount', (...a: Parameters<PayoutChain['getOpAccount']>) => c.getOpAccount(...a)),
    opAccountsData: timed('opAccountsData', (...a: Parameters<PayoutChain['opAccountsData']>) =>
      c.opAccountsData(...a),
    ),
    opAccountSignatures: timed('opAccountSignatures', (pda: Parameters<PayoutChain['opAccountSignatures']>[0]) =>
      c.opAccountSignatures(pda),
    ),
  };
}

function printProfile(label: string): void {
  if (!profile) return;
  console.log(`  profile ${label}: calls, summed ms, average ms`);
  for (const [kind, v] of [...profile.entries()].sort((a, b) => b[1].ms - a[1].ms)) {
    console.log(
      `    ${String(v.n).padStart(6)} ${v.ms.toFixed(0).padStart(7)} ${(v.ms / v.n).toFixed(2).padStart(7)}  ${kind}`,
    );
  }
  profile.clear();
}

/**
 * CPU time (user + system, ms) so far of this process, of the embedded PostgreSQL (its postmaster and every
 * backend) and of the bank's own process: on a shared 2-core machine the wall clock moves with the others' load,
 * CPU per payout much less, and where it is spent says what bounds the ratio.
 */
interface CpuMeter {
  now(): { node: number; pg: number; bank: number };
}

const TICK_MS = 10; // /proc/<pid>/stat counts clock ticks of 1/100 s (getconf CLK_TCK)

/**
 * Every process /proc shows: its parent and its CPU ms (utime + stime, plus cutime + cstime: the children it
 * reaped, e.g. a PostgreSQL backend whose connection closed).
 */
function procTable(): Map<number, { ppid: number; ms: number }> {
  const out = new Map<number, { ppid: number; ms: number }>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(d), {
        ppid: Number(f[1]),
        ms: (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS,
      });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** CPU ms of `root` and its descendants (0 when absent). */
function treeCpuMs(table: Map<number, { ppid: number; ms: number }>, root: number | undefined): number {
  if (root === undefined || !table.has(root)) return 0;
  let ms = 0;
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    ms += table.get(pid)?.ms ?? 0;
    for (const [child, v] of table) if (v.ppid === pid) todo.push(child);
  }
  return ms;
}

function cpuMeter(pgDataDir: string | undefined, bankPid: () => number | undefined): CpuMeter {
  const postmaster = (): number | undefined => {
    if (!pgDataDir) return undefined;
    try {
      return Number(fs.readFileSync(path.join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  };
  return {
    now() {
      const table = procTable();
      const u = process.cpuUsage();
      return {
        node: (u.user + u.system) / 1000,
        pg: treeCpuMs(table, postmaster()),
        bank: treeCpuMs(table, bankPid()),
      };
    },
  };
}

/**
 * BENCH_PAYOUT_CPU_PROFILE=<dir>: a V8 CPU profile of each measured round, one file per bank and mode
 * (<bank>-<mode>-<n>.cpuprofile; open in Chrome DevTools), so the modes' own CPU can be compared.
 */
const CPU_PROFILE_DIR = process.env.BENCH_PAYOUT_CPU_PROFILE;
let inspector: Session | undefined;
let profiled = 0;

async function cpuProfile(): Promise<(name: string) => Promise<void>> {
  if (!CPU_PROFILE_DIR) return async () => undefined;
  if (!inspector) {
    inspector = new Session();
    inspector.connect();
    await inspector.post('Profiler.enable');
  }
  const session = inspector;
  await session.post('Profiler.start');
  return async (name) => {
    const { profile: p } = await session.post('Profiler.stop');
    fs.mkdirSync(CPU_PROFILE_DIR, { recursive: true });
    fs.writeFileSync(path.join(CPU_PROFILE_DIR, `${name}-${++profiled}.cpuprofile`), JSON.stringify(p));
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Bank {
  name: string;
  chain: PayoutChain;
  io: SetupIo;
  /** The bank's own process, when it has one (its CPU is measured). */
  pid?: number;
  stop(): Promise<void>;
}

/** What one bank's rounds work on: its chain, the databases, the merchant and recipient it pays. */
interface RoundSetup {
  bank: Bank;
  db: Pool;
  workerDb: Pool;
  m: MerchantSetup;
  merchant: MerchantRow;
  recipient: PublicKey;
  /** `n` new payout ids for a mode (`prefix`), unique over the bank's run. */
  ids: (prefix: string, n: number) => string[];
}

const termsOf = (r: RoundSetup) => ({ recipient: r.recipient.toBase58(), mint: r.m.mint.toBase58(), amount: '1' });

/** The journal: createPayout + runPayout, CONCURRENCY at a time; payouts/s. */
async function journalRound(r: RoundSetup, n: number): Promise<number> {
  const ids = r.ids('j', n);
  const t0 = performance.now();
  const signal = AbortSignal.timeout(DEADLINE_MS);
  await inParallel(ids, CONCURRENCY, async (payoutId) => {
    const { row } = await createPayout(r.db, r.merchant, { ...termsOf(r), payoutId });
    const res = await runPayout(row, {
      db: r.db,
      chain: r.bank.chain,
      authority: r.m.authority,
      pollIntervalMs: POLL_MS,
      signal,
    });
    if (res?.state !== 'succeeded')
      throw new OncepayError(BENCH_CODES.CHECK_FAILED, `payout ${payoutId}: ${res?.state} ${res?.error}`);
  });
  return n / ((performance.now() - t0) / 1000);
}

/** The worker pool: payouts created as the API does, claimed and executed by a pool started for this round. */
async function workerRound(r: RoundSetup, n: number): Promise<number> {
  const ids = r.ids('w', n);
  const done = new Set<string>();
  let failed: string | undefined;
  let allDone!: () => void;
  const finished = new Promise<void>((res) => (allDone = res));
  // A worker per round, so it does not poll the database while the other modes are measured.
  const w = startPayoutWorker({
    db: r.workerDb,
    chain: r.bank.chain,
    authority: r.m.authority,
    concurrency: CONCURRENCY,
    pollIntervalMs: POLL_MS,
    idleMs: IDLE_MS,
    blockhashMaxAgeMs: BLOCKHASH_MAX_AGE_MS,
    onFinished: (res) => {
      if (res.state !== 'succeeded') failed ??= `payout ${res.payoutId}: ${res.state} ${res.error}`;
      done.add(res.payoutId);
      if (done.size === n || failed) allDone();
    },
  });
  try {
    const t0 = performance.now();
    await inParallel(
      ids,
      CONCURRENCY,
      async (payoutId) => void (await createPayout(r.db, r.merchant, { ...termsOf(r), payoutId })),
    );
    const deadline = sleep(DEADLINE_MS).then(() => {
      throw new OncepayError(
        BENCH_CODES.CHECK_FAILED,
        `worker: ${done.size}/${n} payouts finished within ${DEADLINE_MS} ms`,
      );
    });
    await Promise.race([finished, deadline]);
    if (failed) throw new OncepayError(BENCH_CODES.CHECK_FAILED, failed);
    return n / ((performance.now() - t0) / 1000);
  } finally {
    await w.stop({ graceMs: 0 });
  }
}

/** Direct: the same transactions built, signed, sent and polled to `confirmed`, no database; tx/s. */
async function directRound(r: RoundSetup, n: number): Promise<number> {
  const ids = r.ids('d', n);
  // The worker's chain policy (see the header): one recent blockhash shared for BLOCKHASH_MAX_AGE_MS, the
  // slots' status looks merged into one call while another is in flight, pauses riding on those calls.
  const chain = shareChainCalls(r.bank.chain, { blockhashMaxAgeMs: BLOCKHASH_MAX_AGE_MS });
  const t0 = performance.now();
  await inParallel(ids, CONCURRENCY, async (payoutId) => {
    const p = preparePayout(r.merchant, { ...termsOf(r), payoutId });
    const { bytes, signature } = buildAttemptTransaction(
      p,
      { authority: r.m.authority },
      await chain.latestBlockhash(),
    );
    await chain.sendRawTransaction(bytes);
    // The pause between looks rides on the other sends' status calls, as the worker's slots' pauses do.
    let seen: SignatureStatus[] | undefined;
    for (;;) {
      const [st] = seen ?? (await chain.signatureStatuses([signature]));
      if (st.found && st.settled) {
        if (st.err) throw new OncepayError(BENCH_CODES.CHECK_FAILED, `direct ${payoutId}: ${JSON.stringify(st.err)}`);
        return;
      }
      if (performance.now() - t0 > DEADLINE_MS)
        throw new OncepayError(BENCH_CODES.CHECK_FAILED, `direct ${payoutId}: not confirmed within ${DEADLINE_MS} ms`);
      seen = await chain.pauseLooking([signature], POLL_MS);
    }
  });
  return n / ((performance.now() - t0) / 1000);
}

const MODES = { worker: workerRound, journal: journalRound, direct: directRound } as const;
type Mode = keyof typeof MODES;
/** CPU ms one payout cost in this process, PostgreSQL and the bank's process. */
type Cpu = { node: number; pg: number; bank: number };

/** Runs one mode's round of N: its payouts/s; pushes the CPU each payout cost onto `cpuOf`. */
async function measured(r: RoundSetup, cpu: CpuMeter, cpuOf: Cpu[], mode: Mode): Promise<number> {
  const before = cpu.now();
  const stopProfile = await cpuProfile();
  const rate = await MODES[mode](r, N);
  await stopProfile(`${r.bank.name.split(',')[0].replace(/\W+/g, '-')}-${mode}`);
  const after = cpu.now();
  cpuOf.push({
    node: (after.node - before.node) / N,
    pg: (after.pg - before.pg) / N,
    bank: (after.bank - before.bank) / N,
  });
  return rate;
}

/** The bank's line: the ratios to direct, the absolute rates, the overhead per payout, the rounds, the CPU. */
function report(bank: Bank, rates: Record<Mode, number[]>, cpuOf: Record<Mode, Cpu[]>): void {
  const { worker: w, journal: j, direct: d } = rates;
  const [wm, jm, dm] = [median(w), median(j), median(d)];
  const cpuLine = (mode: Mode) => {
    const xs = cpuOf[mode];
    const part = (k: keyof Cpu) => median(xs.map((x) => x[k])).toFixed(2);
    return `${mode} ${part('node')}/${part('pg')}/${bank.pid === undefined ? '-' : part('bank')}`;
  };
  const overhead = (x: number) => ((1 / x - 1 / dm) * 1000 * CONCURRENCY).toFixed(2);
  const rounds = (xs: number[]) => xs.map((x) => x.toFixed(0)).join('/');
  console.log(
    `payout[${bank.name}]: worker/direct = ${(wm / dm).toFixed(2)}×, journal/direct = ${(jm / dm).toFixed(2)}× ` +
      `(concurrency ${CONCURRENCY}, N=${N}, medians of ${ROUNDS} rounds) | absolute [${machineLabel()}]: ` +
      `worker pool ${wm.toFixed(0)} payouts/s, journal ${jm.toFixed(0)} payouts/s, direct ${dm.toFixed(0)} tx/s; ` +
      `overhead per payout per slot: worker ${overhead(wm)} ms, journal ${overhead(jm)} ms; ` +
      `rounds: worker ${rounds(w)}, journal ${rounds(j)}, direct ${rounds(d)}; ` +
      `CPU ms per payout (this process/PostgreSQL/bank process, medians): ` +
      `${cpuLine('worker')}, ${cpuLine('journal')}, ${cpuLine('direct')}`,
  );
}

async function run(
  bank: Bank,
  db: Pool,
  workerDb: Pool,
  m: MerchantSetup,
  merchant: MerchantRow,
  recipient: PublicKey,
  cpu: CpuMeter,
) {
  if (profile) bank = { ...bank, chain: profileChain(bank.chain) };
  let seq = 0;
  const ids = (prefix: string, n: number) => Array.from({ length: n }, () => `${prefix}-${bank.name}-${++seq}`);
  const r: RoundSetup = { bank, db, workerDb, m, merchant, recipient, ids };

  // Warm-up, one small round of each.
  await workerRound(r, Math.min(20, N));
  await journalRound(r, Math.min(20, N));
  await directRound(r, Math.min(20, N));
  const rates: Record<Mode, number[]> = { worker: [], journal: [], direct: [] };
  const cpuOf: Record<Mode, Cpu[]> = { worker: [], journal: [], direct: [] };
  profile?.clear();
  for (let i = 0; i < ROUNDS; i++) {
    for (const mode of ['worker', 'journal', 'direct'] as const) {
      rates[mode].push(await measured(r, cpu, cpuOf[mode], mode));
      printProfile(`${bank.name}, ${mode}, round ${i + 1}`);
    }
  }
  report(bank, rates, cpuOf);
}

async function main() {
  console.log(`payout: machine ${machineLabel()} at start`);
  if (profile) profileSql();
  // CPU of the embedded server is measured; a server named by DATABASE_URL may be elsewhere.
  await leavingServerAsFound(() =>
    bench(resolveDatabaseUrl(), process.env.DATABASE_URL ? undefined : defaultDataDir()),
  );
}

async function bench(url: string, pgDataDir: string | undefined) {
  const schema = `bench_payout_${process.pid}`;
  const admin = createPool({ url, max: 1 });
  await migrate(admin, { schema });
  const db = createPool({ url, schema, max: CONCURRENCY * 2 + 2 });
  // The worker pool's own connections (as `oncepay payout worker` has): one per slot, one for its gauges.
  const workerDb = createPool({ url, schema, max: CONCURRENCY + 1 });
  try {
    const connectionBank = (name: string, rpc: string, stop: () => Promise<void>, pid?: number): Bank => {
      const connection = new Connection(rpc, { commitment: 'confirmed', disableRetryOnRateLimit: true });
      return { name, chain: createConnectionChain({ connection }), io: connectionIo(connection), pid, stop };
    };
    const banks: Array<() => Promise<Bank>> = [
      async () => {
        const ctx = await startBankrun();
        return { name: 'bankrun', chain: bankrunChain(ctx), io: bankrunIo(ctx), stop: async () => undefined };
      },
      // The node in this process: its work and the client's share one event loop (as in earlier runs; not a
      // deployed topology, see the header).
      async () => {
        const net = await startLocalnet({
          slotMs: SLOT_MS,
          finalityDepth: 2,
          wsOnNextPort: false,
          programs: [{ programId: ONCEPAY_PROGRAM_ID, path: requireProgramSo() }],
        });
        return connectionBank(`localnet in-process (one event loop: not deployed), ${SLOT_MS} ms slots`, net.url, () =>
          net.stop(),
        );
      },
      // The node in a process of its own (`oncepay localnet`), as a real node is: client and node each have a core.
      async () => {
        const net = await spawnLocalnet({ slotMs: SLOT_MS });
        return connectionBank(`localnet own process, ${SLOT_MS} ms slots`, net.rpc, net.stop, net.pid);
      },
    ];
    let k = 0;
    const failed: string[] = [];
    const only = process.env.BENCH_PAYOUT_BANKS?.split(',');
    for (const [i, start] of banks.entries()) {
      if (only && !only.includes(['bankrun', 'in-process', 'own-process'][i])) continue;
      const bank = await start();
      try {
        const m = await setupMerchant(bank.io, { vaultFunds: 10n ** 15n });
        const recipient = await createTokenAccount(bank.io, m.authority, m.mint, Keypair.generate().publicKey);
        const merchant = await insertMerchant(db, {
          name: bank.name,
          apiKeyHash: hashApiKey(`bench-key-${k++}-${process.pid}-000000`),
          programId: address(m.programId),
          merchantAddress: address(m.merchant),
          vault: address(m.vault),
        });
        await run(
          bank,
          db,
          workerDb,
          m,
          merchant,
          recipient,
          cpuMeter(pgDataDir, () => bank.pid),
        );
      } catch (e) {
        // One bank failing (e.g. a stuck payout past the deadline) still lets the others report; the run fails.
        failed.push(`${bank.name}: ${(e as Error).message}`);
        console.log(`payout[${bank.name}]: FAILED: ${(e as Error).message}`);
      } finally {
        await bank.stop();
      }
    }
    if (failed.length > 0)
      throw new OncepayError(BENCH_CODES.CHECK_FAILED, `payout bench failed on: ${failed.join('; ')}`);
  } finally {
    await db.end();
    await workerDb.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
    await admin.end();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
