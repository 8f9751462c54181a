// The model layer of the seeded simulation (sim/): thousands of generated schedules — payout workers, an operator,
// the scanner, the stream, the webhook, two outbox workers and two refunding operators, each killed at any step
// or at a named failpoint, the database restarted or crashed, chain calls failing or losing their answers, sends
// held in a mempool, blockhashes expiring, deliveries repeated and reordered, the merchant endpoint failing — run
// the real pure code against the chain and database models, and every invariant of docs/guarantees.md must hold
// once the faults stop. The seed is random and printed (ONCEPAY_SIM_SEED fixes it); a failure prints the shrunk
// schedule and how to replay it (`make sim SEED=… SIM_PATH=…`, or ONCEPAY_SIM_SEED/ONCEPAY_SIM_PATH here).
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { faultCells } from '../../common/fault-space';
import { DEFAULT_RUNS, formatFailure, simulate } from '../../sim/property';

const env = (name: string) => (process.env[name] === undefined ? undefined : Number(process.env[name]));

describe('sim: the model layer (seeded schedules of faults against the real pure code)', function () {
  this.timeout(600_000);

  it(`every invariant holds over ${env('ONCEPAY_SIM_RUNS') ?? DEFAULT_RUNS} schedules`, () => {
    const r = simulate({
      seed: env('ONCEPAY_SIM_SEED'),
      path: process.env.ONCEPAY_SIM_PATH,
      numRuns: env('ONCEPAY_SIM_RUNS'),
    });
    console.log(
      `      sim: seed ${r.seed} (ONCEPAY_SIM_SEED=${r.seed} replays it), ${r.numRuns} schedules in ` +
        `${(r.ms / 1000).toFixed(1)} s, fault-space cells reached ${r.cells.size}/${faultCells().length}`,
    );
    if (r.failure) {
      // The whole report (with the run's trace) in a file; the head of it in the failure.
      const file = path.resolve(__dirname, '..', '..', '.oncepay', `sim-failure-${r.seed}.txt`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, formatFailure(r));
      const text = formatFailure(r);
      expect.fail(`${text.slice(0, text.indexOf('\nthe run:'))}\n(the run's trace: ${file})`);
    }
  });
});
