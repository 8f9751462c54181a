// SBF toolchain figures, side by side in one run (not a test; `make bench`):
//   CU     each probe in LiteSVM and solana-bankrun; a 1 KiB memcpy through the sol_memcpy_ syscall (what the opt
//          pass emits) versus a byte loop (what LLVM's expandMemCpyAsLoop would give) — the ratio is the point;
//   build  a no-op (up-to-date) `make program` versus a forced rebuild of one probe and of each program (std
//          cached), and the cold build of std + both programs (the Anchor dependency graph included) in a scratch
//          cache, absolute wall-clock seconds labelled with the machine, plus the .so sizes.
// The cold build takes minutes; BENCH_SBF_COLD=0 skips it (crates.io downloads are cached in ~/.cargo either way).
import * as os from 'node:os';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildProbe, buildProbes, BUILD_SH, PROBE_IDS, ROOT, run, scratchDir } from '../testkit/toolchain/build';
import { le128, le64, RUNTIMES } from '../testkit/toolchain/runtimes';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { machineLabel } from './machine';

/** The programs `make program` builds, as far as their crates exist. */
const PROGRAMS = [
  { crate: 'programs/oncepay', so: 'target/deploy/oncepay.so', label: 'oncepay (Anchor)' },
  { crate: 'programs/oncepay-lite', so: 'target/deploy/oncepay_lite.so', label: 'oncepay-lite (pinocchio)' },
].filter((p) => existsSync(join(ROOT, p.crate, 'Cargo.toml')));
const STD_ID = 'StdProbe11111111111111111111111111111111111';

const ID = PROBE_IDS;

function seconds(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function mustRun(args: string[], env: Record<string, string> = {}): string {
  const r = run('env', [...Object.entries(env).map(([k, v]) => `${k}=${v}`), BUILD_SH, ...args]);
  if (r.status !== 0) throw new OncepayError(BENCH_CODES.SETUP_FAILED, r.stderr);
  return r.stderr;
}

/** The seconds build.sh printed for one step (`<name>: rustc done in 12.3s`). */
function stepSeconds(log: string, pattern: RegExp): number {
  return [...log.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0);
}

async function main(): Promise<void> {
  console.log(`machine: ${machineLabel()}`);

  const paths = buildProbes();
  paths[STD_ID] = buildProbe('std');
  mustRun([]);
  for (const p of PROGRAMS) console.log(`${p.so}: ${statSync(join(ROOT, p.so)).size} bytes  (${p.label})`);
  console.log(`std probe .so: ${statSync(paths[STD_ID]).size} bytes`);

  // --- compute units --------------------------------------------------------
  for (const runtime of RUNTIMES) {
    const h = await runtime.start(paths);
    const cu = async (id: string, data: Buffer) => {
      const r = await h.invoke(id, data);
      if (r.error)
        throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${runtime.name}: ${r.error}\n${r.logs.join('\n')}`);
      return r.computeUnits;
    };
    const rows: [string, bigint][] = [
      ['hello (1 log + return data)', await cu(ID.hello, Buffer.from('oncepay'))],
      ['calls (7-arg calls, fn ptr, dyn, tuple/Result)', await cu(ID.calls, le64(100n, 7n, 3n, 4n, 5n, 6n, 9n, 1n))],
      [
        'math (signed div, u128/i128 mul/div, checked)',
        await cu(
          ID.math,
          Buffer.concat([le64(-100n, 7n), le128((1n << 128n) - 1n), le128(3n), le64(2n ** 64n - 1n, 2n)]),
        ),
      ],
      ['fmt (core::fmt, u128 Display, 1 log)', await cu(ID.fmt, le64(2n ** 64n - 1n, 123456n))],
      [
        'float (soft-float f64 ops, saturating casts, Display)',
        await cu(ID.float, Buffer.concat([le64(7n, 2n), Buffer.from(new Float64Array([2.5]).buffer)])),
      ],
      [
        'mem full check (1 KiB set/copy/move/cmp + checksums)',
        await cu(ID.mem, Buffer.concat([Buffer.from([0, 5]), le64(300n)])),
      ],
      [
        'std (Vec, BTreeMap, HashMap, Box<dyn>, format!; n=12)',
        await cu(STD_ID, Buffer.concat([Buffer.from([0]), le64(12n, 123456789n)])),
      ],
    ];
    const base = await cu(ID.mem, Buffer.from([3, 7]));
    const memcpy = (await cu(ID.mem, Buffer.from([1, 7]))) - base;
    const loop = (await cu(ID.mem, Buffer.from([2, 7]))) - base;
    console.log(`\nCU in ${runtime.name}:`);
    for (const [name, v] of rows) console.log(`  ${name.padEnd(56)} ${String(v).padStart(7)} CU`);
    console.log(
      `  1 KiB memcpy: sol_memcpy_ syscall ${memcpy} CU, byte loop ${loop} CU → loop/syscall = ${(Number(loop) / Number(memcpy)).toFixed(0)}×`,
    );
  }

  // --- build times ------------------------------------------------------------
  const load = () => os.loadavg()[0].toFixed(1);
  console.log(`\nbuild (wall clock on this machine, ${os.cpus().length} cores, load average ${load()} at the start):`);
  const noop = seconds(() => mustRun([]));
  console.log(`  make program with nothing changed (both programs up to date)      ${noop.toFixed(1)} s`);
  const probe = seconds(() => mustRun(['--crate', 'toolchain/sbf/probes/calls', '--out', paths[ID.calls], '--force']));
  console.log(`  forced rebuild, calls probe (std cached)                          ${probe.toFixed(1)} s`);
  for (const p of PROGRAMS) {
    const t = seconds(() => mustRun(['--crate', p.crate, '--out', join(ROOT, p.so), '--force']));
    console.log(`  forced rebuild, ${p.label.padEnd(26)} (deps cached)         ${t.toFixed(1)} s`);
  }
  if (process.env.BENCH_SBF_COLD !== '0') {
    // A scratch cache: std and every dependency compiled from nothing (the pass plugin is reused).
    const dir = scratchDir('cold');
    try {
      const env = { ONCEPAY_SBF_DIR: join(dir, 'sbf') };
      let log = '';
      const hello = seconds(() => {
        log = mustRun(['--crate', 'toolchain/sbf/probes/hello', '--out', join(dir, 'hello.so')], env);
      });
      console.log(`  cold: std (core, alloc, std, panic_abort) + the hello probe       ${hello.toFixed(1)} s`);
      for (const p of PROGRAMS) {
        const t = seconds(() => {
          log = mustRun(['--crate', p.crate, '--out', join(dir, `${p.label.split(' ')[0]}.so`)], env);
        });
        const rustc = stepSeconds(log, /rustc done in ([\d.]+)s/g);
        console.log(
          `  cold: ${p.label.padEnd(26)} dependency graph + crate (std cached) ${t.toFixed(1)} s (cargo ${rustc.toFixed(1)} s)`,
        );
      }
      console.log(`  load average at the end ${load()}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
