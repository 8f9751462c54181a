#!/usr/bin/env bash
# Installs what `make demo` / `make test` need, idempotently: Debian packages, then npm packages.
# Fails with a clear message when it cannot.
set -euo pipefail
cd "$(dirname "$0")/.."

# rustfmt-web and rust-web-clippy: `cargo fmt` / `cargo clippy` for Debian's rustc-web (`make lint`).
DEB_PACKAGES=(postgresql rustc-web cargo-web rust-web-src rustfmt-web rust-web-clippy llvm-22 llvm-22-dev g++ make python3 patch)
# Installed without their Recommends: `prometheus` is here only for `promtool` (deploy/prometheus rules are
# checked and unit-tested by `make test`); its recommended node exporter is a daemon we do not want.
DEB_TOOL_PACKAGES=(prometheus)

SUDO=""
apt_updated=""
# install_missing [apt-get install options…] -- package…: installs the packages not yet installed, or nothing.
install_missing() {
  local opts=() missing=() p
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "setup: ERROR: need root (or sudo) to install ${missing[*]}" >&2; exit 1; fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$apt_updated" ]; then
    $SUDO apt-get update -qq || { echo "setup: ERROR: apt-get update failed" >&2; exit 1; }
    apt_updated=1
  fi
  $SUDO apt-get install -y -qq "${opts[@]}" "${missing[@]}" >/dev/null || {
    echo "setup: ERROR: apt-get install ${missing[*]} failed (Debian bookworm packages are required)" >&2; exit 1; }
}
install_missing -- "${DEB_PACKAGES[@]}"
install_missing --no-install-recommends -- "${DEB_TOOL_PACKAGES[@]}"
# pg_auto_failover (`oncepay db ha`, the failover suite tests/ha) only when asked: ONCEPAY_HA=1 (`make ha`, and
# `make test`, whose failover suite runs on it). The extension is built for bookworm's PostgreSQL 15.
HA_DEB_PACKAGES=(pg-auto-failover-cli postgresql-15-auto-failover)
if [ "${ONCEPAY_HA:-0}" = 1 ]; then install_missing -- "${HA_DEB_PACKAGES[@]}"; fi
# Debian's chromium for the browser suites (tests/browser: the checkout page and the operator console, driven by
# puppeteer-core, which downloads no browser) and the README's screenshots: only when asked, ONCEPAY_BROWSER=1
# (`make test`).
BROWSER_DEB_PACKAGES=(chromium)
if [ "${ONCEPAY_BROWSER:-0}" = 1 ]; then install_missing --no-install-recommends -- "${BROWSER_DEB_PACKAGES[@]}"; fi

command -v node >/dev/null || { echo "setup: ERROR: Node.js >= 20.19 is required" >&2; exit 1; }
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=19)?0:1)' ||
  { echo "setup: ERROR: Node.js >= 20.19 is required (found $(node --version))" >&2; exit 1; }

# npm install only when package.json / the lockfile changed since the last install. (`npm install`, not
# `npm ci`: litesvm's lock entry names platform packages the registry does not serve, which `npm ci` rejects.)
stamp=node_modules/.oncepay-lock.sha256
lockhash() { cat package.json package-lock.json | sha256sum | cut -d' ' -f1; }
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(lockhash)" ]; then
  echo "setup: installing npm packages (npm install)"
  npm install --no-audit --no-fund --loglevel=error || { echo "setup: ERROR: npm install failed" >&2; exit 1; }
  lockhash > "$stamp"
fi

# The legacy SPL Token program for `oncepay localnet --token-program legacy` (from crates.io, checked).
toolchain/spl-token-legacy/fetch.sh
