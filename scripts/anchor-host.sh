# Sourced by scripts/test.sh and scripts/lint.sh (not run). The Anchor program's host builds share one target dir
# with the IDL build (idl/gen, run by tests/programs/idl.test.ts): same target dir, features, RUSTFLAGS and
# ANCHOR_IDL_BUILD_* variables as anchor-lang-idl's IdlBuilder sets, so anchor-lang's build scripts and macros are
# compiled for the host once per toolchain.
# anchor_host CARGO SUBCOMMAND [ARGS…]: runs `CARGO SUBCOMMAND --features idl-build --target-dir … ARGS…` in
# programs/oncepay (ARGS may end with `-- …` for the tool, e.g. clippy's `-- -D warnings`).
anchor_host() {
  local cargo="$1" sub="$2"
  shift 2
  (cd programs/oncepay && env RUSTFLAGS="-A warnings" ANCHOR_IDL_BUILD_NO_DOCS=FALSE ANCHOR_IDL_BUILD_RESOLUTION=TRUE \
    ANCHOR_IDL_BUILD_SKIP_LINT=FALSE ANCHOR_IDL_BUILD_PROGRAM_PATH="$(pwd -P)" \
    "$cargo" "$sub" --features idl-build --target-dir ../../target/host "$@")
}
