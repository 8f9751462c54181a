#!/bin/sh
# RUSTC for cargo (set by build.sh): Debian's rustc with the private sysroot
# build.sh prepared, whose library source is Debian's copy with our std patch
# (std/solana-std.patch) and whose host libraries are Debian's. cargo takes
# the library source for -Zbuild-std from `rustc --print sysroot`, so the
# flag must come from here (RUSTFLAGS alone does not move it).
exec "${ONCEPAY_SBF_RUSTC:-/usr/bin/rustc}" --sysroot="${ONCEPAY_SBF_SYSROOT:?set by toolchain/sbf/build.sh}" "$@"
