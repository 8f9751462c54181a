#!/usr/bin/env bash
# `make validator`: installs solana-test-validator 3.1.4 (Agave) from crates.io, idempotently, for
# `make test-validator`. Nothing happens when `solana-test-validator --version` already says 3.1.4. Otherwise it
# installs the Debian packages the build needs, finds the libclang directory (the rocksdb bindings are generated with
# bindgen and fail without LIBCLANG_PATH) and runs
#   cargo install agave-validator --version 3.1.4 --locked --bin solana-test-validator
# (about 30 minutes on two cores, into ~/.cargo/bin). Not part of `make test`.
# Environment: VALIDATOR_JOBS (cargo -j, default 2), CARGO_TARGET_DIR (where the build's objects go; kept between
# runs, so an interrupted install resumes), LIBCLANG_PATH (skips the search).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=3.1.4
say() { echo "validator: $*"; }
fail() {
  echo "validator: ERROR: $*" >&2
  exit 1
}

# Found on PATH or where cargo install puts it.
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"
if command -v solana-test-validator >/dev/null; then
  have=$(solana-test-validator --version 2>/dev/null || true)
  if [[ "$have" == *" $VERSION "* || "$have" == *" $VERSION" ]]; then
    say "solana-test-validator $VERSION is installed ($(command -v solana-test-validator)): nothing to do"
    exit 0
  fi
  say "found ${have:-an unreadable solana-test-validator} at $(command -v solana-test-validator); installing $VERSION"
fi

# The Debian packages the build links or runs: libclang (bindgen), protoc, libudev, pkg-config, OpenSSL.
DEB_PACKAGES=(libclang-dev protobuf-compiler libudev-dev pkg-config libssl-dev clang make g++)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || fail "need root (or sudo) to install ${missing[*]}"
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || fail "apt-get update failed"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "apt-get install ${missing[*]} failed"
fi

# libclang itself (libclang.so, libclang-14.so…), not libclang-cpp.
has_libclang() { compgen -G "$1/libclang.so*" >/dev/null || compgen -G "$1/libclang-[0-9]*.so*" >/dev/null; }
# The folder holding libclang.so: LIBCLANG_PATH if given, else llvm-config's, else the newest Debian llvm-* that has it.
find_libclang() {
  local d
  if [ -n "${LIBCLANG_PATH:-}" ]; then
    echo "$LIBCLANG_PATH"
    return
  fi
  if command -v llvm-config >/dev/null; then
    d=$(llvm-config --libdir 2>/dev/null || true)
    if [ -n "$d" ] && has_libclang "$d"; then
      echo "$d"
      return
    fi
  fi
  for d in $(ls -d /usr/lib/llvm-*/lib 2>/dev/null | sort -t- -k2 -n -r); do
    if has_libclang "$d"; then
      echo "$d"
      return
    fi
  done
  d=$(ldconfig -p 2>/dev/null | awk '/libclang(-[0-9.]+)?\.so/ {print $NF; exit}')
  [ -n "$d" ] && dirname "$d"
}
LIBCLANG_PATH=$(find_libclang || true)
[ -n "$LIBCLANG_PATH" ] || fail "no libclang found (install libclang-dev, or set LIBCLANG_PATH to the folder holding libclang.so)"
export LIBCLANG_PATH
command -v protoc >/dev/null || fail "protoc is missing (Debian package protobuf-compiler)"
command -v cargo >/dev/null || fail "cargo is missing: install Rust (https://rustup.rs) and run make validator again"

jobs="${VALIDATOR_JOBS:-2}"
say "building solana-test-validator $VERSION with $(cargo --version) (-j $jobs, LIBCLANG_PATH=$LIBCLANG_PATH); ~30 min on 2 cores"
cargo install agave-validator --version "$VERSION" --locked --bin solana-test-validator -j "$jobs" ||
  fail "cargo install agave-validator $VERSION failed (see the output above)"
have=$(solana-test-validator --version 2>/dev/null || true)
[[ "$have" == *"$VERSION"* ]] || fail "installed, but solana-test-validator --version says: ${have:-nothing}"
say "installed: $have ($(command -v solana-test-validator))"
