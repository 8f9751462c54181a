#!/usr/bin/env bash
# The package's build (package.json "prepack": `npm pack` and `npm publish` run it): always from nothing, into a
# folder of its own, which then becomes dist/ — so what was built before (a `make build` with source maps and the
# tests, a build-info file, a module since deleted) never reaches the tarball.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.oncepay/pack-build
rm -rf "$out"
node node_modules/typescript/bin/tsc -p tsconfig.build.json --outDir "$out"
rm -rf dist
mv "$out" dist
