#!/usr/bin/env bash
# Regenerates idl/oncepay.json + idl/oncepay.ts from the crate and copies them
# to target/idl/oncepay.json and target/types/oncepay.ts (where `anchor build`
# puts them).
set -euo pipefail
cd "$(dirname "$0")"
ONCEPAY_WRITE_IDL=1 cargo test --quiet --lib idl:: >/dev/null
echo "idl: wrote idl/oncepay.json, idl/oncepay.ts, target/idl/oncepay.json, target/types/oncepay.ts"
