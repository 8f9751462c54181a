#!/usr/bin/env bash
# Runs every test against a real PostgreSQL server started here (stopped on exit, whatever happens)
# and the compiled program in solana-bankrun / LiteSVM.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/anchor-host.sh
export NODE_ENV=test
export ONCEPAY_PG_PORT="${ONCEPAY_PG_PORT:-54339}"
# The test server's folder (ONCEPAY_TEST_PG_DIR lets tests/db/local-server run this script on a server of its own).
PG_DIR="${ONCEPAY_TEST_PG_DIR:-$PWD/.oncepay/pg-test}"

# A process and everything it started (the background programs group on an early exit).
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
cleanup() {
  if [ -n "${programs_pid:-}" ]; then kill_tree "$programs_pid"; fi
  node -e "require('ts-node').register({transpileOnly:true}); require('./db/local-server').stopLocalServer({dataDir: process.argv[1]})" "$PG_DIR/data" || true
}
trap cleanup EXIT INT TERM

if [ -z "${DATABASE_URL:-}" ]; then
  mkdir -p "$PG_DIR"
  DATABASE_URL=$(node -e "require('ts-node').register({transpileOnly:true}); const s=require('./db/local-server'); const dir=process.argv[1]; require('fs').chmodSync(require('path').dirname(dir),0o777); console.log(s.startLocalServer({dataDir: dir, fast: true}).url)" "$PG_DIR/data")
  export DATABASE_URL
fi
# The URL carries the server's password: print it without (printf is a builtin, so no `ps` shows the URL).
redact_url() { printf '%s' "$1" | sed -E 's#^([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):[^@/]*@#\1:***@#'; }
echo "test: PostgreSQL at $(redact_url "$DATABASE_URL")"

# Rust: Debian's toolchain first on PATH, as scripts/lint.sh and toolchain/sbf do (a rustup cargo found first would
# compile the Anchor host graph a second time, beside lint's); the IDL test's cargo is this one too.
RUST_BIN="${ONCEPAY_RUST_BIN:-/usr/bin}"
export PATH="$RUST_BIN:$PATH"

status=0
LOG_DIR="$PWD/.oncepay/test-logs"
mkdir -p "$LOG_DIR"

# The programs' host unit tests. The Anchor program's on the IDL build's settings (scripts/anchor-host.sh), so
# anchor-lang is compiled for the host once.
cargo_tests() {
  local rc=0
  if [ -f programs/oncepay-lite/Cargo.toml ]; then
    echo "test: program host unit tests (cargo test)"
    (cd programs/oncepay-lite && cargo test --quiet --lib 2>&1) || rc=1
  fi
  if [ -f programs/oncepay/Cargo.toml ]; then
    echo "test: Anchor program host unit tests (cargo test, the IDL build's settings)"
    anchor_host cargo test --quiet 2>&1 || rc=1
  fi
  return $rc
}

# One mocha process (mocha itself, not npx, so a crash shows as 128 + signal). A process killed by SIGSEGV or SIGABRT
# is a native crash inside a runtime addon (solana-bankrun 0.4 is known for sporadic segfaults; an assertion never
# ends that way): that process runs once more, whole, and its second result counts. A failing test is never re-run.
run_mocha() {
  local group="$1" rc
  shift
  for try in 1 2; do
    rc=0
    ONCEPAY_TEST_GROUP="$group" ONCEPAY_TEST_STATS="$LOG_DIR/$group.json" node node_modules/mocha/bin/mocha.js "$@" || rc=$?
    if [ "$rc" -ne 139 ] && [ "$rc" -ne 134 ]; then return "$rc"; fi
    echo "test: the $group suites' process crashed (exit $rc = 128 + signal $((rc - 128)), a native crash, not a test failure)"
    [ "$try" -eq 1 ] && echo "test: running the $group suites once more"
  done
  return "$rc"
}

if [ $# -gt 0 ]; then
  # Only the given files/globs (e.g. scripts/test.sh 'tests/app/**/*.test.ts'), in one process, after the cargo tests
  # (ONCEPAY_TEST_CARGO=0 leaves them out: scripts/test-e2e.sh).
  if [ "${ONCEPAY_TEST_CARGO:-1}" != 0 ]; then cargo_tests || status=1; fi
  run_mocha selected "$@" || status=1
  exit $status
fi

# Every suite, as two groups side by side (the machine has two cores): "programs" (the compiled programs in
# bankrun/LiteSVM and the SBF toolchain: CPU-bound, no database), after the cargo tests, in the background with its
# output in a log printed when it ends; and "services" (PostgreSQL, localnet, the CLI processes: mostly waiting) in
# the foreground. One closing line sums both. The programs group runs at a lower priority (nice 10): it only
# computes, while the services' fault and crash tests wait on restarts and timeouts that a starved process misses
# (a fresh-clone run at load 70–100 failed a harness connect that way); it still gets every idle cycle.
PROGRAM_SUITES=('tests/programs/**/*.test.ts' 'tests/toolchain/**/*.test.ts')
rm -f "$LOG_DIR"/*.json
(
  renice -n 10 -p "$BASHPID" >/dev/null 2>&1 || true
  rc=0
  cargo_tests || rc=1
  run_mocha programs "${PROGRAM_SUITES[@]}" || rc=1
  exit $rc
) >"$LOG_DIR/programs.log" 2>&1 &
programs_pid=$!
echo "test: programs group running in the background (output: ${LOG_DIR#"$PWD/"}/programs.log, printed when it ends)"
ignore=()
for g in "${PROGRAM_SUITES[@]}"; do ignore+=(--ignore "$g"); done
run_mocha services 'tests/**/*.test.ts' "${ignore[@]}" || status=1
programs_status=0
wait "$programs_pid" || programs_status=$?
programs_pid=
echo
echo "test: ---- programs group (cargo tests, tests/programs, tests/toolchain) ----"
cat "$LOG_DIR/programs.log"
[ "$programs_status" -eq 0 ] || status=1

# The closing line CI reads: both groups' counts summed (a group that wrote no counts did not finish: a failure).
node -e '
  const fs = require("fs");
  const t = { passed: 0, failed: 0, skipped: 0 };
  let missing = [];
  for (const g of ["services", "programs"]) {
    const f = `${process.argv[1]}/${g}.json`;
    if (!fs.existsSync(f)) { missing.push(g); continue; }
    const c = JSON.parse(fs.readFileSync(f, "utf8"));
    for (const k of Object.keys(t)) t[k] += c[k];
  }
  // Every failed case by name (the head of its error too), just above the closing line: a CI log that keeps only
  // its tail still says what failed.
  for (const g of ["services", "programs"]) {
    const f = `${process.argv[1]}/${g}.json`;
    if (!fs.existsSync(f)) continue;
    for (const x of JSON.parse(fs.readFileSync(f, "utf8")).failures ?? []) console.log(`FAILED (${g}) ${x.title}\n    ${x.error}`);
  }
  if (missing.length) console.log(`test: no counts from the ${missing.join(" and ")} group (it did not finish)`);
  console.log(`tests: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`);
  process.exit(missing.length ? 1 : 0);
' "$LOG_DIR" || status=1
exit $status
