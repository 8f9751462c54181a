// The model layer as a fast-check property: `numRuns` generated schedules, each run and checked against every
// invariant; the first failing one is shrunk to a short schedule. A failure prints its seed, its fast-check path
// and the shrunk schedule with what broke and the trace of the run; the same seed (and path) replays it exactly:
// `make sim SEED=<seed> [SIM_PATH=<path>]`, or `npx ts-node sim/run.ts --seed <seed> --path <path>`.
import fc from 'fast-check';
import { type Cores, REAL_CORES } from './cores';
import { runSchedule } from './runner';
import { describeStep, type Schedule, scheduleArb } from './schedule';

export const DEFAULT_RUNS = 2000;

export interface SimOptions {
  seed?: number;
  /** fast-check's path of a failure: replays that (shrunk) schedule alone. */
  path?: string;
  numRuns?: number;
  cores?: Cores;
  /** Stop at the first failure without shrinking it (counting how many schedules a mutant takes). */
  noShrink?: boolean;
}

export interface SimFailure {
  path: string;
  schedule: Schedule;
  problems: string[];
  trace: string[];
  /** Schedules run until the first failure (that one included). */
  runsToFailure: number;
  shrinks: number;
}

export interface SimReport {
  seed: number;
  /** Schedules run (without those run while shrinking). */
  numRuns: number;
  failure?: SimFailure;
  /** Fault-space cells reached (common/fault-space.ts cellKey). */
  cells: Set<string>;
  ms: number;
}

export function simulate(opts: SimOptions = {}): SimReport {
  const cores = opts.cores ?? REAL_CORES;
  const seed = opts.seed ?? Date.now() % 2 ** 31;
  const cells = new Set<string>();
  let last: { problems: string[]; trace: string[] } | undefined;
  const property = fc.property(scheduleArb(), (schedule) => {
    const r = runSchedule(schedule, cores);
    for (const c of r.cells) cells.add(c);
    last = { problems: r.problems, trace: r.trace };
    return r.problems.length === 0;
  });
  const t0 = performance.now();
  const details = fc.check(property, {
    seed,
    numRuns: opts.numRuns ?? DEFAULT_RUNS,
    ...(opts.path ? { path: opts.path } : {}),
    ...(opts.noShrink ? { endOnFailure: true } : {}),
  });
  const ms = performance.now() - t0;
  if (!details.failed || !details.counterexample) return { seed, numRuns: details.numRuns, cells, ms };
  const [schedule] = details.counterexample;
  // Run the shrunk schedule once more: its own problems and trace (the last run was a shrinking attempt).
  const again = runSchedule(schedule, cores);
  last = { problems: again.problems, trace: again.trace };
  return {
    seed,
    numRuns: details.numRuns,
    cells,
    ms,
    failure: {
      path: details.counterexamplePath ?? '',
      schedule,
      problems: last.problems,
      trace: last.trace,
      runsToFailure: details.numRuns,
      shrinks: details.numShrinks,
    },
  };
}

/**
 * What a failure prints: how to replay it (with the known bug it ran with, if any), what broke, the shrunk
 * schedule, and the run's trace.
 */
export function formatFailure(r: SimReport, mutant?: string): string {
  const f = r.failure!;
  const make = mutant ? ` MUTANT=${mutant}` : '';
  const flag = mutant ? ` --mutant ${mutant}` : '';
  const lines = [
    `simulation FAILED after ${f.runsToFailure} schedule(s) (seed ${r.seed}, path ${f.path}, shrunk ${f.shrinks} times)`,
    `replay: make sim SEED=${r.seed} SIM_PATH=${f.path}${make}   ` +
      `(or: npx ts-node sim/run.ts --seed ${r.seed} --path ${f.path}${flag})`,
    'what broke:',
    ...f.problems.map((p) => `  ${p}`),
    `the world: ${JSON.stringify(f.schedule.config)}`,
    `the schedule (${f.schedule.steps.length} steps):`,
    ...f.schedule.steps.map((s, i) => `  ${String(i + 1).padStart(3)} ${describeStep(s)}`),
    'the run:',
    ...f.trace.map((t) => `  ${t}`),
  ];
  return lines.join('\n');
}
