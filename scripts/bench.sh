#!/usr/bin/env bash
# Benchmarks: each prints ratios measured side by side in one run, plus absolute figures labelled with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "bench: machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m), node $(node --version)"
for b in bench/*.ts; do
  [ -e "$b" ] || continue
  echo "== $b"
  node -r ts-node/register/transpile-only "$b"
done
