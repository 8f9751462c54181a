#!/usr/bin/env bash
# `make lint` (run first by `make test`): formatting and lint of the whole tree. Every check runs; a failure names
# the command that fixes it, and the run fails at the end.
#   TypeScript/JSON: prettier --check, eslint (configs: .prettierrc.json, .prettierignore, eslint.config.mjs)
#   Rust (host target): cargo fmt --check and cargo clippy --all-targets -D warnings for programs/oncepay (with
#   the IDL build's settings, scripts/anchor-host.sh), programs/oncepay-lite, idl/gen and tests/programs/caller (the
#   test program that calls the payout program by CPI).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/anchor-host.sh

# Debian's Rust (rustc-web, cargo-web, rustfmt-web, rust-web-clippy: scripts/setup.sh installs them), not whatever
# `cargo` comes first on PATH (e.g. rustup's): first on PATH too, so cargo's subcommands (cargo-fmt, cargo-clippy
# and its clippy-driver) and the rustc they run are Debian's, as on a machine without rustup.
RUST_BIN="${ONCEPAY_RUST_BIN:-/usr/bin}"
export PATH="$RUST_BIN:$PATH"
CARGO="$RUST_BIN/cargo"
RUST_CRATES=(programs/oncepay programs/oncepay-lite idl/gen tests/programs/caller)

failed=()
# check WHAT FIX COMMAND…: runs the command; when it fails, remembers what failed and how to fix it.
check() {
  local what="$1" fix="$2"
  shift 2
  echo "lint: $what"
  "$@" || failed+=("$what"$'\n'"      fix: $fix")
}
in_dir() { (cd "$1" && shift && "$@"); }

check "npx prettier --check ." "npx prettier --write ." npx prettier --check --log-level warn .
check "npx eslint ." "the errors listed above (npx eslint --fix . mends some)" npx eslint .
for c in "${RUST_CRATES[@]}"; do
  check "$c: cargo fmt --check" "(cd $c && cargo fmt)" in_dir "$c" "$CARGO" fmt --check
done
clippy="cargo clippy --all-targets -- -D warnings"
check "programs/oncepay: $clippy (IDL build's settings)" "the warnings listed above" \
  anchor_host "$CARGO" clippy --quiet --all-targets -- -D warnings
check "programs/oncepay-lite: $clippy" "the warnings listed above" \
  in_dir programs/oncepay-lite "$CARGO" clippy --quiet --all-targets -- -D warnings
# idl/gen in the host target dir too (its own build, by idl.test.ts, uses idl/gen/target).
check "idl/gen: $clippy" "the warnings listed above" \
  in_dir idl/gen "$CARGO" clippy --quiet --all-targets --target-dir ../../target/host -- -D warnings
check "tests/programs/caller: $clippy" "the warnings listed above" \
  in_dir tests/programs/caller "$CARGO" clippy --quiet --all-targets --target-dir ../../../target/host -- -D warnings

if ((${#failed[@]})); then
  echo "lint: FAILED (${#failed[@]}):" >&2
  for f in "${failed[@]}"; do echo "  $f" >&2; done
  exit 1
fi
echo "lint: ok"
