// The simulation's model layer (sim/): how many schedules a second it runs, and how much of the fault space one
// run reaches — the share of all cells (failpoint × fault kind, common/fault-space.ts: the same list the code and
// the simulation read) in which some schedule put a fault of that kind while a process sat in that failpoint's
// window. Coverage of the fault space, not of lines. Also listed: the cells no schedule reached, and why.
import { cellKey, faultCells } from '../common/fault-space';
import { simulate } from '../sim/property';
import { MODEL_FAILPOINTS } from '../sim/schedule';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { machineLabel } from './machine';

const RUNS = Number(process.env.BENCH_SIM_RUNS ?? 2000);
const SEED = Number(process.env.BENCH_SIM_SEED ?? 1);

function main(): void {
  const cells = faultCells();
  const r = simulate({ seed: SEED, numRuns: RUNS });
  if (r.failure)
    throw new OncepayError(
      BENCH_CODES.CHECK_FAILED,
      `the simulation failed on seed ${SEED}: ${r.failure.problems.join('; ')}`,
    );
  const perSecond = r.numRuns / (r.ms / 1000);
  const reachable = cells.filter((c) => MODEL_FAILPOINTS.includes(c.failpoint));
  const missed = cells.filter((c) => !r.cells.has(cellKey(c)));
  console.log(`sim model layer (seed ${SEED}, ${r.numRuns} schedules; machine ${machineLabel()}):`);
  console.log(
    `  ${perSecond.toFixed(0)} schedules/s (${(r.ms / r.numRuns).toFixed(2)} ms each, ${(r.ms / 1000).toFixed(1)} s in all)`,
  );
  console.log(
    `  fault space reached: ${r.cells.size} of ${cells.length} cells (${((100 * r.cells.size) / cells.length).toFixed(0)} %); ` +
      `of the ${reachable.length} cells whose failpoint a model process passes: ${((100 * r.cells.size) / reachable.length).toFixed(0)} %`,
  );
  for (const c of missed) {
    const why = MODEL_FAILPOINTS.includes(c.failpoint) ? 'not reached by this run' : 'no model process passes it';
    console.log(`  not reached: ${cellKey(c)} (${why})`);
  }
}

main();
