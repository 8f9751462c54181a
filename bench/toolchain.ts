// SBF toolchain figures, side by side in one run (not a test; `make bench`):
//   CU     each probe in LiteSVM and solana-bankrun; a 1 KiB memcpy through the sol_memcpy_ syscall (what the opt
//          pass emits) versus a byte loop (what LLVM's expandMemCpyAsLoop would give) — the ratio is the point;
//   build  a no-op (up-to-date) build.sh run versus a forced rebuild of one probe (build-std core cached) and of
//          programs/oncepay-lite, absolute wall-clock seconds labelled with the machine.
// The cold build (pass plugin + core/alloc + everything) is timed only with BENCH_SBF_COLD=1 (minutes).
import * as os from 'node:os';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { buildOncepay, buildProbes, BUILD_SH, PROBE_IDS, run, scratchDir } from '../tests/toolchain/support/build';
import { le128, le64, RUNTIMES } from '../tests/toolchain/support/runtimes';

const ID = PROBE_IDS;

function seconds(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function mustRun(args: string[], env: Record<string, string> = {}): void {
  const r = run('env', [...Object.entries(env).map(([k, v]) => `${k}=${v}`), BUILD_SH, ...args]);
  if (r.status !== 0) throw new Error(r.stderr);
}

async function main(): Promise<void> {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  console.log(`machine: ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.arch()}`);

  const paths = buildProbes();
  const oncepay = buildOncepay();
  console.log(`oncepay.so: ${statSync(oncepay).size} bytes`);

  // --- compute units --------------------------------------------------------
  for (const runtime of RUNTIMES) {
    const h = await runtime.start(paths);
    const cu = async (id: string, data: Buffer) => {
      const r = await h.invoke(id, data);
      if (r.error) throw new Error(`${runtime.name}: ${r.error}\n${r.logs.join('\n')}`);
      return r.computeUnits;
    };
    const rows: [string, bigint][] = [
      ['hello (1 log + return data)', await cu(ID.hello, Buffer.from('oncepay'))],
      ['calls (7-arg calls, fn ptr, dyn, tuple/Result)', await cu(ID.calls, le64(100n, 7n, 3n, 4n, 5n, 6n, 9n, 1n))],
      [
        'math (signed div, u128/i128 mul/div, checked)',
        await cu(ID.math, Buffer.concat([le64(-100n, 7n), le128((1n << 128n) - 1n), le128(3n), le64(2n ** 64n - 1n, 2n)])),
      ],
      ['fmt (core::fmt, u128 Display, 1 log)', await cu(ID.fmt, le64(2n ** 64n - 1n, 123456n))],
      [
        'float (soft-float f64 ops, saturating casts, Display)',
        await cu(ID.float, Buffer.concat([le64(7n, 2n), Buffer.from(new Float64Array([2.5]).buffer)])),
      ],
      ['mem full check (1 KiB set/copy/move/cmp + checksums)', await cu(ID.mem, Buffer.concat([Buffer.from([0, 5]), le64(300n)]))],
    ];
    const base = await cu(ID.mem, Buffer.from([3, 7]));
    const memcpy = (await cu(ID.mem, Buffer.from([1, 7]))) - base;
    const loop = (await cu(ID.mem, Buffer.from([2, 7]))) - base;
    console.log(`\nCU in ${runtime.name}:`);
    for (const [name, v] of rows) console.log(`  ${name.padEnd(56)} ${String(v).padStart(7)} CU`);
    console.log(`  1 KiB memcpy: sol_memcpy_ syscall ${memcpy} CU, byte loop ${loop} CU → loop/syscall = ${(Number(loop) / Number(memcpy)).toFixed(0)}×`);
  }

  // --- build times ------------------------------------------------------------
  const noop = seconds(() => mustRun([]));
  const probe = seconds(() => mustRun(['--crate', 'toolchain/sbf/probes/calls', '--out', paths[ID.calls], '--force']));
  const program = seconds(() => mustRun(['--crate', 'programs/oncepay-lite', '--out', oncepay, '--features', 'bpf-entrypoint', '--force']));
  console.log(`\nbuild (wall clock on this machine, ${os.cpus().length} cores):`);
  console.log(`  up-to-date build.sh (make program, nothing changed)   ${noop.toFixed(1)} s`);
  console.log(`  forced rebuild, calls probe (core cached)             ${probe.toFixed(1)} s`);
  console.log(`  forced rebuild, programs/oncepay-lite (core cached)        ${program.toFixed(1)} s  (${(program / noop).toFixed(0)}× the no-op)`);
  if (process.env.BENCH_SBF_COLD === '1') {
    const dir = scratchDir('cold');
    const cold = seconds(() =>
      mustRun(['--crate', 'programs/oncepay-lite', '--out', join(dir, 'oncepay.so'), '--features', 'bpf-entrypoint'], {
        ONCEPAY_SBF_DIR: join(dir, 'sbf'),
        ONCEPAY_SBF_TOOL_BUILD: join(dir, 'tool'),
      }),
    );
    console.log(`  cold build, programs/oncepay-lite (plugin + core/alloc + crate)  ${cold.toFixed(1)} s`);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
