#!/usr/bin/env bash
# Runs every test against a real PostgreSQL server started here (stopped on exit, whatever happens)
# and the compiled program in solana-bankrun / LiteSVM.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_ENV=test
export ONCEPAY_PG_PORT="${ONCEPAY_PG_PORT:-54339}"
# The test server's folder (ONCEPAY_TEST_PG_DIR lets tests/db/local-server run this script on a server of its own).
PG_DIR="${ONCEPAY_TEST_PG_DIR:-$PWD/.oncepay/pg-test}"

cleanup() {
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

status=0
if [ -d programs/oncepay-lite ] && [ -f programs/oncepay-lite/Cargo.toml ]; then
  echo "test: program host unit tests (cargo test)"
  (cd programs/oncepay-lite && cargo test --quiet --lib 2>&1) || status=1
fi
if [ -f programs/oncepay/Cargo.toml ]; then
  # The Anchor program's host build is shared with the IDL build (idl/gen, run by tests/programs/idl.test.ts):
  # same target dir, features, RUSTFLAGS and ANCHOR_IDL_BUILD_* variables as anchor-lang-idl's IdlBuilder sets,
  # so anchor-lang is compiled for the host once.
  echo "test: Anchor program host unit tests (cargo test, the IDL build's settings)"
  (cd programs/oncepay && env RUSTFLAGS="-A warnings" ANCHOR_IDL_BUILD_NO_DOCS=FALSE ANCHOR_IDL_BUILD_RESOLUTION=TRUE \
    ANCHOR_IDL_BUILD_SKIP_LINT=FALSE ANCHOR_IDL_BUILD_PROGRAM_PATH="$(pwd -P)" \
    cargo test --quiet --features idl-build --target-dir ../../target/host 2>&1) || status=1
fi
# With no arguments, every suite; otherwise only the given files/globs (e.g. scripts/test.sh 'tests/app/**/*.test.ts').
if [ $# -eq 0 ]; then set -- 'tests/**/*.test.ts'; fi
npx mocha "$@" || status=1
exit $status
