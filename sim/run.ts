// The model layer from the command line (`make sim`, `make sim-mutants`): run N schedules from a seed, replay one
// failure by its seed and path, or show that each known bug (sim/mutants.ts) is caught and how many schedules it
// took. Not part of the shipped `oncepay` command: it drives test machinery (fast-check, a dev dependency, and the
// in-memory models), which merchants neither install nor need; its failures are reproduced from a checkout.
import { Command } from 'commander';
import { faultCells } from '../common/fault-space';
import { MUTANTS, mutant } from './mutants';
import { DEFAULT_RUNS, formatFailure, simulate } from './property';
import { REAL_CORES } from './cores';
import { OncepayError, SIM_CODES } from '../common/errors';

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new OncepayError(SIM_CODES.OPTION_INVALID, `not a non-negative integer: ${v}`);
  return n;
};

function main(argv: string[]): number {
  const program = new Command()
    .name('sim')
    .description('The seeded simulation of oncepay (the model layer): schedules of faults against the real pure code')
    .option('--seed <n>', 'the seed of the schedules (default: a random one, printed)', int)
    .option('--path <path>', "fast-check's path of a failure: replay that shrunk schedule alone")
    .option('--runs <n>', `schedules to run (default ${DEFAULT_RUNS})`, int)
    .option('--mutant <name>', `run with one known bug patched in (${MUTANTS.map((m) => m.name).join(', ')})`)
    .option('--mutants', 'run every known bug and report how many schedules each took to be caught')
    .option('--trace', 'print the trace of a failing run (long)')
    .parse(argv);
  const o = program.opts<{
    seed?: number;
    path?: string;
    runs?: number;
    mutant?: string;
    mutants?: boolean;
    trace?: boolean;
  }>();

  if (o.mutants) return mutants(o.seed ?? 1, o.runs ?? 5000);

  const cores = o.mutant ? mutant(o.mutant).patch(REAL_CORES) : REAL_CORES;
  const r = simulate({ seed: o.seed, path: o.path, numRuns: o.runs, cores });
  const total = faultCells().length;
  console.log(
    `sim: seed ${r.seed}, ${r.numRuns} schedules in ${(r.ms / 1000).toFixed(1)} s` +
      `${o.mutant ? ` (mutant ${o.mutant})` : ''}; fault-space cells reached ${r.cells.size}/${total}`,
  );
  if (!r.failure) {
    console.log('sim: every invariant held');
    return 0;
  }
  const text = formatFailure(r, o.mutant);
  console.log(o.trace ? text : text.slice(0, text.indexOf('\nthe run:')) + '\n(the run: --trace)');
  return 1;
}

/** Each known bug patched in, from the same seed: how many schedules until an invariant caught it. */
function mutants(seed: number, runs: number): number {
  let missed = 0;
  console.log(`sim mutants: seed ${seed}, at most ${runs} schedules each`);
  for (const m of MUTANTS) {
    const r = simulate({ seed, numRuns: runs, cores: m.patch(REAL_CORES), noShrink: true });
    if (!r.failure) {
      missed++;
      console.log(`  NOT CAUGHT ${m.name} in ${r.numRuns} schedules: ${m.bug}`);
      continue;
    }
    const names = [...new Set(r.failure.problems.map((p) => p.slice(0, p.indexOf(':'))))];
    console.log(
      `  caught ${m.name} after ${r.failure.runsToFailure} schedule(s) by ${names.join(', ')} (expected ${m.caughtBy}): ${m.bug}`,
    );
  }
  return missed === 0 ? 0 : 1;
}

process.exitCode = main(process.argv);
