#!/usr/bin/env bash
# Builds a no_std Solana program crate into an SBPF v0 .so with Debian packages
# only (rustc-web, rust-web-src, llvm-22): no platform-tools, no cargo build-sbf.
#
#   toolchain/sbf/build.sh                          programs/oncepay-lite -> target/deploy/oncepay.so
#   toolchain/sbf/build.sh --crate DIR --out FILE   any crate
#   toolchain/sbf/build.sh --ir FILE.ll --out FILE  LLVM IR/bitcode: opt+llc+elf2sbf only
#   options: --features LIST  --emit-ir  --force  --quiet  --help
#
# Pipeline (toolchain/sbf/README.md): cargo rustc (staticlib of LLVM bitcode,
# build-std core+alloc, target JSON with os=solana) -> llvm-ar x -> llvm-link
# -> opt (internalize, O2, oncepay-sbf pass plugin) -> llc -mcpu=v2 -> elf2sbf.
# Rebuilds only when an input changed (stamp next to the output).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# Debian's paths; rustup's ~/.cargo/bin/rustc must not be picked up from PATH.
LLVM_BIN="${ONCEPAY_SBF_LLVM_BIN:-/usr/lib/llvm-22/bin}"
RUSTC="${ONCEPAY_SBF_RUSTC:-/usr/bin/rustc}"
CARGO="${ONCEPAY_SBF_CARGO:-/usr/bin/cargo}"
TARGET_JSON="$HERE/target-spec/bpfel-solana-oncepay.json"
TARGET_NAME=bpfel-solana-oncepay
# Overridable to time a cold build without disturbing the shared caches.
TOOL_BUILD="${ONCEPAY_SBF_TOOL_BUILD:-$HERE/build}"
PLUGIN="$TOOL_BUILD/oncepay-sbf-pass.so"
SBF_DIR="${ONCEPAY_SBF_DIR:-$ROOT/target/sbf}"
CARGO_TARGET="$SBF_DIR/cargo"
PROGRAM_ID=5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj

crate="" ir="" out="" features="" emit_ir=0 force=0 quiet=0

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
say() { [ "$quiet" = 1 ] || echo "sbf-build: $*" >&2; }
die() { echo "sbf-build: ERROR: $*" >&2; exit 1; }

while (($#)); do
  case "$1" in
    --crate) crate="${2:?--crate needs a directory}"; shift 2 ;;
    --out) out="${2:?--out needs a file}"; shift 2 ;;
    --ir) ir="${2:?--ir needs a file}"; shift 2 ;;
    --features) features="${2:?--features needs a list}"; shift 2 ;;
    --emit-ir) emit_ir=1; shift ;;
    --force) force=1; shift ;;
    --quiet) quiet=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

# --- required Debian packages -------------------------------------------------
need() { # need <path> <debian package>
  [ -e "$1" ] || die "$1 is missing: install Debian package '$2' (scripts/setup.sh installs it)"
}
need "$RUSTC" rustc-web
need "$CARGO" cargo-web
for t in llvm-ar llvm-link opt llc; do need "$LLVM_BIN/$t" llvm-22; done
need /usr/lib/llvm-22/include/llvm/Plugins/PassPlugin.h llvm-22-dev
command -v g++ >/dev/null || die "g++ is missing: install Debian package 'g++' (scripts/setup.sh installs it)"
command -v python3 >/dev/null || die "python3 is missing: install Debian package 'python3'"
SYSROOT="$("$RUSTC" --print sysroot)"
need "$SYSROOT/lib/rustlib/src/rust/library/core/Cargo.toml" rust-web-src

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# --- pass plugin (built on first use, rebuilt when its sources change) -------
build_plugin() {
  mkdir -p "$TOOL_BUILD"
  local want have=""
  want=$(cat "$HERE"/pass/*.cpp "$HERE"/pass/*.h <("$LLVM_BIN/llvm-config" --version) | sha256sum | cut -c1-64)
  [ -f "$PLUGIN.stamp" ] && have=$(cat "$PLUGIN.stamp")
  if [ -f "$PLUGIN" ] && [ "$want" = "$have" ]; then return; fi
  local t0; t0=$(now)
  say "building opt pass plugin (g++, once)"
  # One compiler per source file, as many at once as there are cores; -O1:
  # the plugin's own speed does not matter, its compile time does.
  local objs=()
  printf '%s\n' "$HERE"/pass/*.cpp |
    xargs -P "$(nproc)" -I{} sh -c 'g++ -c -fPIC -O1 $3 -fno-rtti "$1" -o "$2/$(basename "$1" .cpp).o"' \
      _ {} "$TOOL_BUILD" "$("$LLVM_BIN/llvm-config" --cxxflags)" || die "building the pass plugin failed (g++)"
  for src in "$HERE"/pass/*.cpp; do objs+=("$TOOL_BUILD/$(basename "$src" .cpp).o"); done
  g++ -shared "${objs[@]}" -o "$PLUGIN.tmp" || die "linking the pass plugin failed"
  mv "$PLUGIN.tmp" "$PLUGIN"
  echo "$want" > "$PLUGIN.stamp"
  say "pass plugin built in $(since "$t0")"
}

# --- inputs hash ------------------------------------------------------------
# Sources of the crate and of its path dependencies, Cargo.lock, the toolchain
# files and the compiler versions.
inputs_hash() {
  local dir="$1"
  python3 - "$dir" "$HERE" "$features" <<'EOF'
import hashlib, os, re, sys, tomllib
crate, tool, features = sys.argv[1], sys.argv[2], sys.argv[3]
seen, files = set(), []
def walk_crate(d):
    d = os.path.realpath(d)
    if d in seen: return
    seen.add(d)
    for base, dirs, names in os.walk(d):
        dirs[:] = sorted(x for x in dirs if x not in ("target", ".git", "node_modules"))
        files.extend(os.path.join(base, n) for n in sorted(names)
                     if n.endswith((".rs", ".toml", ".lock", ".json")))
    try:
        manifest = tomllib.load(open(os.path.join(d, "Cargo.toml"), "rb"))
    except FileNotFoundError:
        return
    for section in ("dependencies", "dev-dependencies", "build-dependencies"):
        for spec in manifest.get(section, {}).values():
            if isinstance(spec, dict) and "path" in spec:
                walk_crate(os.path.join(d, spec["path"]))
walk_crate(crate)
for sub in ("pass", "elf2sbf", "target-spec"):
    for base, dirs, names in os.walk(os.path.join(tool, sub)):
        dirs.sort()
        files.extend(os.path.join(base, n) for n in sorted(names) if not n.endswith(".pyc"))
files.append(os.path.join(tool, "build.sh"))
h = hashlib.sha256(features.encode())
for f in files:
    h.update(f.encode()); h.update(open(f, "rb").read())
print(h.hexdigest())
EOF
  "$RUSTC" -vV | sha256sum | cut -c1-16
  "$LLVM_BIN/llc" --version | head -3 | sha256sum | cut -c1-16
}

lib_name() { # the crate's library name, as cargo names the staticlib
  python3 - "$1/Cargo.toml" <<'EOF'
import sys, tomllib
m = tomllib.load(open(sys.argv[1], "rb"))
print(m.get("lib", {}).get("name", m["package"]["name"]).replace("-", "_"))
EOF
}

has_feature() {
  python3 - "$1/Cargo.toml" "$2" <<'EOF'
import sys, tomllib
sys.exit(0 if sys.argv[2] in tomllib.load(open(sys.argv[1], "rb")).get("features", {}) else 1)
EOF
}

# Steps 3-5 on $work/linked.bc: opt (+ plugin), llc, elf2sbf -> $out.
bitcode_to_so() { # bitcode_to_so <work dir> <name> <out .so>
  local work="$1" name="$2" out="$3"
  # 3. keep only `entrypoint` public, optimize, rewrite what the backend refuses.
  "$LLVM_BIN/opt" -load-pass-plugin="$PLUGIN" --internalize-public-api-list=entrypoint \
    -passes='oncepay-sbf-softfloat,internalize,globaldce,default<O2>,lower-atomic,oncepay-sbf,globaldce' \
    "$work/linked.bc" -o "$work/opt.bc" || die "$name: opt failed"
  if [ "$emit_ir" = 1 ]; then
    "$LLVM_BIN/llvm-dis" "$work/linked.bc" -o "$work/linked.ll"
    "$LLVM_BIN/llvm-dis" "$work/opt.bc" -o "$work/opt.ll"
    say "$name: IR kept in $work/linked.ll and $work/opt.ll"
  fi
  # 4. BPF object: -mcpu=v2 (v3 would emit JMP32, absent from SBPF v0).
  "$LLVM_BIN/llc" -march=bpfel -mcpu=v2 -O2 -bpf-stack-size=4096 -filetype=obj \
    "$work/opt.bc" -o "$work/$name.o" || die "$name: llc failed"
  # 5. relocatable object -> loadable SBPF v0 shared object.
  python3 "$HERE/elf2sbf/elf2sbf.py" "$work/$name.o" "$out.tmp" || die "$name: elf2sbf refused the object"
  mv "$out.tmp" "$out"
}

# LLVM IR or bitcode given directly (--ir): steps 3-5 only, always rebuilt.
build_ir() { # build_ir <file.ll|file.bc> <out .so>
  local ir="$1" out="$2" name work
  name="ir-$(basename "${ir%.*}")"
  work="$SBF_DIR/work/$name"
  build_plugin
  rm -rf "$work"; mkdir -p "$work" "$(dirname "$out")"
  case "$ir" in
    *.ll) "$LLVM_BIN/llvm-as" "$ir" -o "$work/linked.bc" || die "$ir: llvm-as failed" ;;
    *) cp "$ir" "$work/linked.bc" ;;
  esac
  bitcode_to_so "$work" "$name" "$out"
  say "$name: wrote $out"
}

build_one() { # build_one <crate dir> <out .so>
  local dir out name work stamp want t0 t1
  dir="$(cd "$1" && pwd)"; out="$2"
  [ -f "$dir/Cargo.toml" ] || die "$dir has no Cargo.toml"
  name="$(lib_name "$dir")"
  mkdir -p "$(dirname "$out")"
  out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
  stamp="$out.stamp"
  want="$(inputs_hash "$dir" | tr '\n' ' ')"
  if [ "$force" = 0 ] && [ -f "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
     { [ "$emit_ir" = 0 ] || [ -f "$SBF_DIR/work/$name/opt.ll" ]; }; then
    say "$name: up to date ($out)"
    return 0
  fi
  build_plugin
  work="$SBF_DIR/work/$name"
  rm -rf "$work"; mkdir -p "$work/objs"

  # 1. rustc -> staticlib whose members are LLVM bitcode (obj-is-bitcode).
  t0=$(now)
  say "$name: cargo rustc (build-std core+alloc, cached under target/sbf/cargo)"
  local feat=()
  [ -n "$features" ] && feat=(--features "$features")
  (cd "$dir" && env RUSTC="$RUSTC" RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$CARGO_TARGET" \
      CARGO_PROFILE_RELEASE_PANIC=abort CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
      CARGO_PROFILE_RELEASE_OPT_LEVEL=2 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_DEBUG=0 \
      CARGO_PROFILE_RELEASE_INCREMENTAL=false RUSTFLAGS="" CARGO_ENCODED_RUSTFLAGS="" \
      "$CARGO" rustc --quiet --release --lib --crate-type staticlib "${feat[@]}" \
      --target "$TARGET_JSON" -Zbuild-std=core,alloc -Zjson-target-spec) ||
    die "$name: cargo rustc failed"
  local lib="$CARGO_TARGET/$TARGET_NAME/release/lib$name.a"
  [ -f "$lib" ] || die "$name: expected $lib after cargo rustc"
  say "$name: rustc done in $(since "$t0")"

  # 2. link bitcode (the crate, its dependencies, core, alloc, compiler_builtins).
  t1=$(now)
  (cd "$work/objs" && "$LLVM_BIN/llvm-ar" x "$lib")
  shopt -s nullglob
  local objs=("$work"/objs/*.o)
  shopt -u nullglob
  ((${#objs[@]})) || die "$name: $lib has no object members"
  "$LLVM_BIN/llvm-link" "${objs[@]}" -o "$work/linked.bc" || die "$name: llvm-link failed"
  bitcode_to_so "$work" "$name" "$out"
  # Hash again: cargo may have just written the crate's Cargo.lock.
  inputs_hash "$dir" | tr '\n' ' ' > "$stamp"
  say "$name: link+opt+llc+elf2sbf done in $(since "$t1"); wrote $out ($(stat -c %s "$out") bytes)"
}

build_probes() {
  local p
  for p in "$HERE"/probes/*/; do
    p="${p%/}"
    [ "$(basename "$p")" = rt ] && continue
    build_one "$p" "$SBF_DIR/probes/$(basename "$p").so"
  done
}

mkdir -p "$SBF_DIR"
# One build at a time per tree: cargo's target dir and the stamps are shared.
exec 9>"$SBF_DIR/.build.lock"
flock 9

start=$(now)
if [ -n "$ir" ]; then
  [ -n "$out" ] || die "--ir needs --out"
  build_ir "$ir" "$out"
elif [ -n "$crate" ]; then
  [ -n "$out" ] || out="$ROOT/target/deploy/$(lib_name "$crate").so"
  build_one "$crate" "$out"
elif [ -f "$ROOT/programs/oncepay-lite/Cargo.toml" ]; then
  [ -n "$features" ] || ! has_feature "$ROOT/programs/oncepay-lite" bpf-entrypoint || features=bpf-entrypoint
  build_one "$ROOT/programs/oncepay-lite" "${out:-$ROOT/target/deploy/oncepay.so}"
  say "program id $PROGRAM_ID"
else
  say "programs/oncepay-lite does not exist yet: building the toolchain probes only"
  build_probes
fi
say "total $(since "$start")"
