#!/usr/bin/env bash
# The end-to-end suites, the ones that run on a node: the program over RPC (both binaries), the SDK's merchant
# lifecycle, exceptions and packed package, payouts (lost responses, crashes, workers, database faults), the scanner,
# the stream and webhook verification. With ANCHOR_PROVIDER_URL / ANCHOR_WALLET set (`anchor test`, `make
# test-validator`) they use that node (testkit/node.ts), skipping with a printed reason the cases that need
# localnet's admin API; without them each suite starts its own localnet, as in `make test`.
# Runs through scripts/test.sh (its own PostgreSQL on ONCEPAY_PG_PORT), without the cargo host tests. Files or globs
# given as arguments run instead of the whole list (scripts/test-validator.sh passes its arguments on).
set -euo pipefail
cd "$(dirname "$0")/.."
E2E_SUITES=(
  tests/localnet/program.test.ts
  tests/sdk/lifecycle.test.ts
  tests/sdk/exception-refund.test.ts
  tests/sdk/package.test.ts
  tests/app/payout/localnet.test.ts
  tests/app/payout/worker.test.ts
  tests/app/payout/worker-processes.test.ts
  tests/app/payout/worker-db-fault.test.ts
  tests/indexer/source/scanner-localnet.test.ts
  tests/indexer/source/stream-localnet.test.ts
  tests/indexer/source/ws-localnet.test.ts
  tests/indexer/source/webhook.test.ts
)
if [ $# -gt 0 ]; then E2E_SUITES=("$@"); fi
ONCEPAY_TEST_CARGO=0 exec scripts/test.sh "${E2E_SUITES[@]}"
