// The simulation can fail: each known bug of sim/mutants.ts, patched into the cores in memory, is caught by an
// invariant within a budget of schedules (from a fixed seed, so this is a regression test; `make sim-mutants`
// counts them over other seeds). A simulation that could not catch these would pass anything.
import { expect } from 'chai';
import { REAL_CORES } from '../../sim/cores';
import { MUTANTS } from '../../sim/mutants';
import { simulate } from '../../sim/property';

const SEED = 3;
const BUDGET = 5000;

describe('sim: known bugs patched into the cores are caught', function () {
  this.timeout(600_000);

  for (const m of MUTANTS) {
    it(`${m.name}: ${m.bug}`, () => {
      const r = simulate({ seed: SEED, numRuns: BUDGET, cores: m.patch(REAL_CORES), noShrink: true });
      expect(r.failure, `not caught in ${r.numRuns} schedules from seed ${SEED}`).to.not.equal(undefined);
      const names = [...new Set(r.failure!.problems.map((p) => p.slice(0, p.indexOf(':'))))];
      console.log(`      caught after ${r.failure!.runsToFailure} schedule(s) by ${names.join(', ')}`);
    });
  }

  it('the real cores pass the same schedules', () => {
    const longest = 700; // seed 3 catches every mutant within this many schedules
    expect(simulate({ seed: SEED, numRuns: longest }).failure).to.equal(undefined);
  });
});
