#!/usr/bin/env bash
# `make test-validator`: the end-to-end suites (scripts/test-e2e.sh) on a real solana-test-validator instead of
# localnet. Starts the validator with both programs in genesis — the Anchor program at the canonical id, its lean twin
# at a second id (testkit/node.ts: ONCEPAY_LITE_TEST_PROGRAM_ID) — on its own ledger and ports, waits for it to be
# healthy, runs the suites with ANCHOR_PROVIDER_URL / ANCHOR_WALLET set (as `anchor test` does), stops it whatever
# happens, and prints which cases ran, failed, and were skipped (with the reason), also written to
# .oncepay/test-logs/validator-cases.txt. Not part of `make test`; `make validator` installs the validator.
# Arguments (files or globs) run those suites instead of the whole list, e.g.
#   scripts/test-validator.sh tests/localnet/program.test.ts
# Environment: VALIDATOR_RPC_PORT (18899; websockets on +1), VALIDATOR_FAUCET_PORT (19900), VALIDATOR_GOSSIP_PORT
# (21101), VALIDATOR_DYNAMIC_PORTS (21000-21100), ONCEPAY_PG_PORT (the suites' PostgreSQL, scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"

fail() {
  echo "test-validator: ERROR: $*" >&2
  exit 1
}
command -v solana-test-validator >/dev/null ||
  fail "solana-test-validator is not on PATH: run \`make validator\` (builds Agave's 3.1.4 from crates.io, ~30 min)"

ANCHOR_SO=target/deploy/oncepay.so
LITE_SO=target/deploy/oncepay_lite.so
for so in "$ANCHOR_SO" "$LITE_SO"; do [ -f "$so" ] || fail "$so is missing: run \`make program\`"; done
ids=$(node -e "require('ts-node').register({transpileOnly:true}); const n=require('./testkit/node'); const i=n.testProgramIds(); console.log(i.anchor, i.lite)")
read -r ANCHOR_ID LITE_ID <<<"$ids"

RPC_PORT="${VALIDATOR_RPC_PORT:-18899}"
FAUCET_PORT="${VALIDATOR_FAUCET_PORT:-19900}"
GOSSIP_PORT="${VALIDATOR_GOSSIP_PORT:-21101}"
DYNAMIC_PORTS="${VALIDATOR_DYNAMIC_PORTS:-21000-21100}"
STATE="$ROOT/.oncepay/validator"
LEDGER="$STATE/ledger"
LOG_DIR="$ROOT/.oncepay/test-logs"
CASES="$LOG_DIR/validator-cases.txt"
VLOG="$LOG_DIR/validator.log"
mkdir -p "$STATE" "$LOG_DIR"

# The wallet (ANCHOR_WALLET): a keypair of this checkout's own, the genesis mint (funded at genesis, so a case that
# cannot use the faucet pays from it).
WALLET="$STATE/wallet.json"
if [ ! -f "$WALLET" ]; then
  node -e "const {Keypair}=require('@solana/web3.js'); require('fs').writeFileSync(process.argv[1], JSON.stringify([...Keypair.generate().secretKey]), {mode: 0o600})" "$WALLET"
fi
WALLET_PUBKEY=$(node -e "const {Keypair}=require('@solana/web3.js'); console.log(Keypair.fromSecretKey(Uint8Array.from(JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')))).publicKey.toBase58())" "$WALLET")

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$RPC_PORT" "$((RPC_PORT + 1))" "$FAUCET_PORT"; do
  if port_busy "$p"; then fail "port $p is in use (another validator?): set VALIDATOR_RPC_PORT / VALIDATOR_FAUCET_PORT"; fi
done

validator_pid=""
stop_validator() {
  if [ -n "$validator_pid" ] && kill -0 "$validator_pid" 2>/dev/null; then
    kill -TERM "$validator_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$validator_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$validator_pid" 2>/dev/null || true
    wait "$validator_pid" 2>/dev/null || true
  fi
  validator_pid=""
}
trap stop_validator EXIT
trap 'stop_validator; exit 130' INT TERM

echo "test-validator: $(solana-test-validator --version) on 127.0.0.1:$RPC_PORT (ledger ${LEDGER#"$ROOT/"}, log ${VLOG#"$ROOT/"})"
echo "test-validator: programs: oncepay at $ANCHOR_ID, oncepay-lite at $LITE_ID"
solana-test-validator \
  --ledger "$LEDGER" --reset --quiet \
  --bind-address 127.0.0.1 \
  --rpc-port "$RPC_PORT" --faucet-port "$FAUCET_PORT" \
  --gossip-port "$GOSSIP_PORT" --dynamic-port-range "$DYNAMIC_PORTS" \
  --mint "$WALLET_PUBKEY" \
  --bpf-program "$ANCHOR_ID" "$ANCHOR_SO" \
  --bpf-program "$LITE_ID" "$LITE_SO" \
  >"$VLOG" 2>&1 &
validator_pid=$!

URL="http://127.0.0.1:$RPC_PORT"
health() {
  curl -s -m 2 -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' "$URL" 2>/dev/null |
    grep -q '"result":"ok"'
}
started=$(date +%s)
until health; do
  kill -0 "$validator_pid" 2>/dev/null || {
    tail -20 "$VLOG" >&2
    fail "solana-test-validator exited while starting (log: $VLOG)"
  }
  [ $(($(date +%s) - started)) -lt 180 ] || fail "solana-test-validator was not healthy after 180 s (log: $VLOG)"
  sleep 0.5
done
echo "test-validator: healthy after $(($(date +%s) - started)) s"

export ANCHOR_PROVIDER_URL="$URL"
export ANCHOR_WALLET="$WALLET"
export ONCEPAY_TEST_CASES="$CASES"
: >"$CASES"
t0=$(date +%s)
status=0
scripts/test-e2e.sh "$@" || status=$?
wall=$(($(date +%s) - t0))
stop_validator

echo
echo "test-validator: ---- cases on solana-test-validator ($wall s; list in ${CASES#"$ROOT/"}) ----"
ran=$(grep -c '^ran ' "$CASES" || true)
failed=$(grep -c '^failed ' "$CASES" || true)
skipped=$(grep -c '^skipped ' "$CASES" || true)
if [ "$skipped" -gt 0 ]; then
  echo "skipped (need localnet's admin API):"
  grep '^skipped ' "$CASES" | sed 's/^skipped  */  /'
fi
if [ "$failed" -gt 0 ]; then
  echo "failed:"
  grep '^failed ' "$CASES" | sed 's/^failed  */  /'
fi
echo "test-validator: $ran ran, $failed failed, $skipped skipped"
exit "$status"
