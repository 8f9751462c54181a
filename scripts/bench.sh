#!/usr/bin/env bash
# Benchmarks: each prints ratios measured side by side in one run, plus absolute figures labelled with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "bench: machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m), node $(node --version)"
for b in bench/*.ts; do
  [ -e "$b" ] || continue
  # The fleet bench needs pg_auto_failover and ~10 minutes: `make fleet` runs it.
  [ "$b" = bench/fleet.ts ] && continue
  echo "== $b"
  node -r ts-node/register/transpile-only "$b"
done
