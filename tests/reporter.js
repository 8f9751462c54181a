// Mocha's spec reporter plus one plain closing line ("tests: N passed, N failed, N skipped") that CI reads,
// preceded by the slowest test files (wall time per file) so a slow `make test` says where its time goes.
// scripts/test.sh runs the suites as groups in separate processes: then ONCEPAY_TEST_GROUP names the group (its
// closing line reads "tests (group): …") and ONCEPAY_TEST_STATS receives the counts as JSON, which the script sums
// into the one closing line. ONCEPAY_TEST_CASES names a file that receives one line per case: `ran`, `failed` or
// `skipped` and its full title, and for a skipped case the reason it was skipped (testkit/node's skipOnExternalNode
// stores it on the case or on its suite).
const fs = require('fs');
const Mocha = require('mocha');
const path = require('path');
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_FAIL, EVENT_TEST_PASS, EVENT_TEST_PENDING } =
  Mocha.Runner.constants;

/** How many of the slowest files the closing summary lists (ONCEPAY_TEST_SLOWEST=0 turns it off). */
const SLOWEST = Number.parseInt(process.env.ONCEPAY_TEST_SLOWEST ?? '12', 10);
const GROUP = process.env.ONCEPAY_TEST_GROUP;
const STATS_FILE = process.env.ONCEPAY_TEST_STATS;
const CASES_FILE = process.env.ONCEPAY_TEST_CASES;

/** Why a pending case was skipped: its own reason, else the nearest suite's, else mocha's (it.skip / this.skip). */
function skipReason(test) {
  for (let r = test; r; r = r.parent) if (r.skipReason) return r.skipReason;
  return 'skipped without a reason';
}

class OncepayReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const started = new Map(); // top-level suite -> start (ms)
    const spent = new Map(); // file -> wall ms, summed over its top-level suites
    const cases = [];
    const failures = []; // { title, error }: the closing summary names them, so a CI log's tail says what failed
    const file = (t) => (t.file ? path.relative(process.cwd(), t.file) : '?');
    runner.on(EVENT_TEST_PASS, (t) => cases.push(`ran      ${file(t)}: ${t.fullTitle()}`));
    runner.on(EVENT_TEST_FAIL, (t, err) => {
      cases.push(`failed   ${file(t)}: ${t.fullTitle()}`);
      const message = String((err && (err.message || err)) || 'no message')
        .split('\n')
        .slice(0, 3)
        .join(' | ');
      failures.push({ title: `${file(t)}: ${t.fullTitle()}`, error: message.slice(0, 400) });
    });
    runner.on(EVENT_TEST_PENDING, (t) => cases.push(`skipped  ${file(t)}: ${t.fullTitle()} — ${skipReason(t)}`));
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
      const label = GROUP ? `tests (${GROUP})` : 'tests';
      if (SLOWEST > 0 && spent.size > 0) {
        const rows = [...spent.entries()].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST);
        const total = (s.duration / 1000).toFixed(0);
        process.stdout.write(`\nslowest test files${GROUP ? ` (${GROUP})` : ''} (wall seconds, of ${total} s):\n`);
        for (const [file, ms] of rows) process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(7)}  ${file}\n`);
      }
      if (CASES_FILE) fs.appendFileSync(CASES_FILE, cases.map((c) => `${c}\n`).join(''));
      if (STATS_FILE) {
        const counts = {
          passed: s.passes,
          failed: s.failures,
          skipped: s.pending,
          seconds: s.duration / 1000,
          failures,
        };
        fs.writeFileSync(STATS_FILE, JSON.stringify(counts));
      }
      process.stdout.write(`${label}: ${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}
module.exports = OncepayReporter;
