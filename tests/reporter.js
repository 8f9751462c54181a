// Mocha's spec reporter plus one plain closing line ("tests: N passed, N failed, N skipped") that CI reads,
// preceded by the slowest test files (wall time per file) so a slow `make test` says where its time goes.
const Mocha = require('mocha');
const path = require('path');
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

/** How many of the slowest files the closing summary lists (ONCEPAY_TEST_SLOWEST=0 turns it off). */
const SLOWEST = Number.parseInt(process.env.ONCEPAY_TEST_SLOWEST ?? '12', 10);

class OncepayReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const started = new Map(); // file -> first start (ms)
    const spent = new Map(); // file -> wall ms, summed over its top-level suites
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && suite.parent && suite.parent.root) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const t0 = started.get(suite);
      if (t0 === undefined) return;
      const file = path.relative(process.cwd(), suite.file);
      spent.set(file, (spent.get(file) ?? 0) + (Date.now() - t0));
    });
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      if (SLOWEST > 0 && spent.size > 0) {
        const rows = [...spent.entries()].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST);
        process.stdout.write(`\nslowest test files (wall seconds, of ${(s.duration / 1000).toFixed(0)} s in all):\n`);
        for (const [file, ms] of rows) process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(7)}  ${file}\n`);
      }
      process.stdout.write(`tests: ${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}
module.exports = OncepayReporter;
