#!/usr/bin/env bash
# The legacy SPL Token program a solana-test-validator 3.1.4 runs (spl_token-3.5.0.so), for
# `oncepay localnet --token-program legacy`: fetched from crates.io inside solana-program-binaries 3.1.4 with
# `cargo fetch --locked` (Cargo.lock holds the crate's checksum), then copied out and checked against its sha256.
# Idempotent; no binary is committed. Writes .oncepay/programs/spl_token-3.5.0.so.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.oncepay/programs/spl_token-3.5.0.so
SO_SHA256=18264f491c7e0ad056dd36f42f8de6d1fedf9f044d1f521e714b4dc6b61594b6
CRATE=solana-program-binaries-3.1.4

sha_of() { sha256sum "$1" | cut -d' ' -f1; }
if [ -f "$OUT" ] && [ "$(sha_of "$OUT")" = "$SO_SHA256" ]; then exit 0; fi

CARGO="${ONCEPAY_RUST_BIN:-/usr/bin}/cargo"
[ -x "$CARGO" ] || CARGO=cargo
echo "setup: fetching the legacy SPL Token program ($CRATE from crates.io)"
"$CARGO" fetch --locked --quiet --manifest-path toolchain/spl-token-legacy/Cargo.toml ||
  { echo "setup: ERROR: cargo fetch of $CRATE failed (is crates.io reachable?)" >&2; exit 1; }
crate=""
for f in "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$CRATE.crate"; do [ -f "$f" ] && crate="$f"; done
[ -n "$crate" ] || { echo "setup: ERROR: $CRATE.crate is not in cargo's cache after cargo fetch" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
tar -xzOf "$crate" "$CRATE/src/programs/spl_token-3.5.0.so" > "$OUT.tmp"
if [ "$(sha_of "$OUT.tmp")" != "$SO_SHA256" ]; then
  rm -f "$OUT.tmp"
  echo "setup: ERROR: spl_token-3.5.0.so from $crate does not have the expected sha256" >&2
  exit 1
fi
mv "$OUT.tmp" "$OUT"
