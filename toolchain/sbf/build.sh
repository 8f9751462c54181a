#!/usr/bin/env bash
# Builds a Solana program crate (std or no_std, e.g. anchor-lang or pinocchio)
# into an SBPF v0 .so with Debian packages only (rustc-web, rust-web-src,
# llvm-22): no platform-tools, no cargo build-sbf, no bpf-linker.
#
#   toolchain/sbf/build.sh                          both programs: programs/oncepay -> target/deploy/oncepay.so,
#                                                   programs/oncepay-lite -> target/deploy/oncepay_lite.so
#   toolchain/sbf/build.sh --crate DIR --out FILE   any crate
#   toolchain/sbf/build.sh --ir FILE.ll --out FILE  LLVM IR/bitcode: opt+llc+elf2sbf only
#   options: --features LIST  --emit-ir  --force  --quiet  --help
#
# Pipeline (toolchain/sbf/README.md): std prepared once (Debian's library
# source + std/solana-std.patch, private sysroot) -> cargo rustc (staticlib of
# LLVM bitcode, build-std std+panic_abort, target JSON with os=solana) ->
# llvm-ar x -> llvm-link -> opt (internalize, O2, oncepay-sbf pass plugin) ->
# llc -mcpu=v2 (frames over 4 KiB refused by name) -> elf2sbf.
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
# Overridable for the tests (a patch that does not apply).
STD_PATCH="${ONCEPAY_SBF_STD_PATCH:-$HERE/std/solana-std.patch}"
# cargo's linker for this target (CARGO_TARGET_<JSON STEM IN CAPS>_LINKER).
LINKER_VAR="CARGO_TARGET_$(echo "$TARGET_NAME" | tr 'a-z-' 'A-Z_')_LINKER"
# An SBF stack frame is 4 KiB.
MAX_FRAME=4096
PROGRAM_ID=5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj

crate="" ir="" out="" features="" emit_ir=0 force=0 quiet=0

usage() { sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
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
for t in llvm-ar llvm-link opt llc llvm-cxxfilt; do need "$LLVM_BIN/$t" llvm-22; done
need /usr/lib/llvm-22/include/llvm/Plugins/PassPlugin.h llvm-22-dev
command -v g++ >/dev/null || die "g++ is missing: install Debian package 'g++' (scripts/setup.sh installs it)"
command -v python3 >/dev/null || die "python3 is missing: install Debian package 'python3'"
command -v patch >/dev/null || die "patch is missing: install Debian package 'patch' (scripts/setup.sh installs it)"
SYSROOT="$("$RUSTC" --print sysroot)"
# Asked once: every stamp hashes them (a no-op `make program` stays fast).
RUSTC_VV="$("$RUSTC" -vV)"
LLC_VERSION="$("$LLVM_BIN/llc" --version | head -3)"
HOST="$(sed -n 's/^host: //p' <<< "$RUSTC_VV")"
RUSTC_RELEASE="$(sed -n 's/^release: //p' <<< "$RUSTC_VV")"
# Debian's Rust library source (rust-web-src).
LIBRARY_SRC="$SYSROOT/lib/rustlib/src/rust/library"
need "$LIBRARY_SRC/core/Cargo.toml" rust-web-src

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

# --- std for os = "solana": a private sysroot ------------------------------
# cargo does not notice edits to the library source, so everything built
# from it (the sysroot and cargo's target dir) lives in a directory named by
# (rustc version, patch): a new rustc or a changed patch gets a fresh one and
# the old one is deleted. The key is also part of every output's stamp.
std_key() {
  { echo "$RUSTC_VV"; cat "$STD_PATCH"; } | sha256sum | cut -c1-16
}

prepare_std() {
  STD_DIR="$SBF_DIR/std-$(std_key)"
  STD_SYSROOT="$STD_DIR/sysroot"
  CARGO_TARGET="$STD_DIR/cargo"
  [ -f "$STD_DIR/.ready" ] && return
  local t0 lib check
  t0=$(now)
  say "preparing std (rustc $RUSTC_RELEASE, $(basename "$STD_PATCH")) in $STD_DIR"
  # A Debian update of rust-web-src may move the code the patch edits: say so.
  if ! check=$(patch --dry-run --batch --forward -p1 -d "$LIBRARY_SRC" -i "$STD_PATCH" 2>&1); then
    echo "$check" | sed 's/^/  patch: /' >&2
    die "the std patch $STD_PATCH does not apply to the Rust library source of rustc $RUSTC_RELEASE" \
        "($LIBRARY_SRC, Debian package rust-web-src): an update changed the code it edits." \
        "Redo each hunk on this source (toolchain/sbf/README.md, section std) (ONCEPAY__SBF__STD_PATCH)"
  fi
  rm -rf "$STD_DIR"
  lib="$STD_SYSROOT/lib/rustlib/src/rust/library"
  mkdir -p "$(dirname "$lib")"
  cp -a "$LIBRARY_SRC/." "$lib"
  chmod -R u+w "$lib"
  patch --batch --forward --quiet -p1 -d "$lib" -i "$STD_PATCH" || die "applying the std patch failed in $lib"
  # Host libraries (build scripts, proc-macros) stay Debian's.
  ln -s "$SYSROOT/lib/rustlib/$HOST" "$STD_SYSROOT/lib/rustlib/$HOST"
  local old
  for old in "$SBF_DIR"/std-*; do [ "$old" = "$STD_DIR" ] || rm -rf "$old"; done
  rm -rf "$SBF_DIR/cargo" # the core+alloc cache of earlier versions of this script
  touch "$STD_DIR/.ready"
  say "std source prepared in $(since "$t0") (compiled by the first cargo build, then cached)"
}

# --- inputs hash ------------------------------------------------------------
# One python run per crate (a no-op `make program` is mostly process starts):
# the library name (as cargo names the staticlib), 1 if the crate defines the
# bpf-entrypoint feature, and a hash of its sources, Cargo.lock, its path
# dependencies' sources and the toolchain files.
crate_facts() { # crate_facts <crate dir>
  python3 - "$1" "$HERE" <<'EOF'
import hashlib, os, sys, tomllib
crate, tool = sys.argv[1], sys.argv[2]
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
for sub in ("pass", "elf2sbf", "target-spec", "std"):
    for base, dirs, names in os.walk(os.path.join(tool, sub)):
        dirs.sort()
        files.extend(os.path.join(base, n) for n in sorted(names) if not n.endswith(".pyc"))
files.extend(os.path.join(tool, n) for n in ("build.sh", "rustc-sysroot.sh", "no-link.sh"))
h = hashlib.sha256()
for f in files:
    h.update(f.encode()); h.update(open(f, "rb").read())
manifest = tomllib.load(open(os.path.join(crate, "Cargo.toml"), "rb"))
print(manifest.get("lib", {}).get("name", manifest["package"]["name"]).replace("-", "_"))
print(1 if "bpf-entrypoint" in manifest.get("features", {}) else 0)
print(h.hexdigest())
EOF
}

# The stamp of one output: its sources' hash, the features, and the versions
# of rustc, LLVM and std (the std key), asked once per run.
VERSIONS_KEY=""
stamp_line() { # stamp_line <sources hash>
  [ -n "$VERSIONS_KEY" ] ||
    VERSIONS_KEY="rustc=$(echo "$RUSTC_VV" | sha256sum | cut -c1-16) llvm=$(echo "$LLC_VERSION" | sha256sum | cut -c1-16) std=$(std_key)"
  echo "sources=$1 features=$features $VERSIONS_KEY"
}

lib_name() { crate_facts "$1" | head -1; }

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
  # 4. BPF object: -mcpu=v2 (v3 would emit JMP32, absent from SBPF v0). llc
  # reports every function's frame size (remarks); frames are checked below,
  # so llc's own check (which also refuses a frame of exactly 4 KiB, with
  # the mangled name) is set one byte past the limit.
  local llc_ok=1
  "$LLVM_BIN/llc" -march=bpfel -mcpu=v2 -O2 -bpf-stack-size=$((MAX_FRAME + 1)) -filetype=obj \
    -pass-remarks-analysis=prologepilog "$work/opt.bc" -o "$work/$name.o" 2> "$work/llc.log" || llc_ok=0
  check_frames "$work/llc.log" "$name"
  grep -v ' stack bytes in function ' "$work/llc.log" >&2 || true
  [ "$llc_ok" = 1 ] || die "$name: llc failed"
  # 5. relocatable object -> loadable SBPF v0 shared object.
  python3 "$HERE/elf2sbf/elf2sbf.py" "$work/$name.o" "$out.tmp" || die "$name: elf2sbf refused the object"
  mv "$out.tmp" "$out"
}

# Frames over 4 KiB overflow into the next frame at run time: refuse them,
# naming the Rust function (demangled) and the usual cure.
check_frames() { # check_frames <llc remarks log> <name>
  local big
  big=$(sed -n "s/^remark: .*: \([0-9]*\) stack bytes in function '\(.*\)'\$/\1 \2/p" "$1" |
        awk -v max="$MAX_FRAME" '$1 > max' | sort -rn)
  [ -n "$big" ] || return 0
  local bytes sym
  while read -r bytes sym; do
    echo "sbf-build: ERROR: $2: stack frame of $bytes bytes in \`$(echo "$sym" | "$LLVM_BIN/llvm-cxxfilt")\`" \
         "exceeds the SBF limit of $MAX_FRAME bytes ($sym)" >&2
  done <<< "$big"
  die "$2: move large values off the stack: Box them (in Anchor, Box<Account<'info, T>> for large accounts)" \
      "(ONCEPAY__SBF__STACK_FRAME)"
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

build_one() { # build_one <crate dir> <out .so> [1: bpf-entrypoint by default]
  local dir out name has_entry sources work stamp want t0 t1
  dir="$(cd "$1" && pwd)"; out="$2"
  [ -f "$dir/Cargo.toml" ] || die "$dir has no Cargo.toml"
  { read -r name; read -r has_entry; read -r sources; } <<< "$(crate_facts "$dir")"
  [ -n "$sources" ] || die "$dir/Cargo.toml could not be read (see above)"
  [ "${3:-0}" = 0 ] || [ -n "$features" ] || [ "$has_entry" = 0 ] || features=bpf-entrypoint
  mkdir -p "$(dirname "$out")"
  out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
  stamp="$out.stamp"
  want="$(stamp_line "$sources")"
  if [ "$force" = 0 ] && [ -f "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
     { [ "$emit_ir" = 0 ] || [ -f "$SBF_DIR/work/$name/opt.ll" ]; }; then
    say "$name: up to date ($out, sha256 $(sha256sum "$out" | cut -c1-64))"
    return 0
  fi
  build_plugin
  prepare_std
  work="$SBF_DIR/work/$name"
  rm -rf "$work"; mkdir -p "$work/objs"

  # 1. rustc -> staticlib whose members are LLVM bitcode (obj-is-bitcode).
  # std is built for every crate (no_std ones link only core/alloc from it):
  # one cache, compiled once. compiler-builtins-mem as for a no_std build;
  # no backtrace/unwind support (panic=abort, nothing to print to).
  t0=$(now)
  say "$name: cargo rustc (build-std std, cached under ${CARGO_TARGET#"$ROOT/"})"
  local feat=() locked=()
  [ -n "$features" ] && feat=(--features "$features")
  [ -f "$dir/Cargo.lock" ] && locked=(--locked)
  # Panic locations inside the library name Debian's source, not this
  # checkout's copy, and those inside crates.io dependencies name /cargo, not
  # this user's CARGO_HOME: the same .so from every checkout, on every machine
  # with the same Debian packages (the crate's own paths are relative).
  local remap="--remap-path-prefix=$STD_SYSROOT/lib/rustlib/src/rust/library=$LIBRARY_SRC"
  remap+=$'\x1f'"--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo"
  # Two crates may share a library name (oncepay and oncepay-lite) and so this
  # file: removed first, it can only be the one cargo writes (again) now.
  local lib="$CARGO_TARGET/$TARGET_NAME/release/lib$name.a"
  rm -f "$lib"
  (cd "$dir" && env RUSTC="$HERE/rustc-sysroot.sh" ONCEPAY_SBF_RUSTC="$RUSTC" ONCEPAY_SBF_SYSROOT="$STD_SYSROOT" \
      RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$CARGO_TARGET" "$LINKER_VAR=$HERE/no-link.sh" \
      CARGO_PROFILE_RELEASE_PANIC=abort CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
      CARGO_PROFILE_RELEASE_OPT_LEVEL=2 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_DEBUG=0 \
      CARGO_PROFILE_RELEASE_INCREMENTAL=false RUSTFLAGS="" CARGO_ENCODED_RUSTFLAGS="$remap" \
      "$CARGO" rustc --quiet --release --lib --crate-type staticlib "${feat[@]}" "${locked[@]}" \
      --target "$TARGET_JSON" -Zbuild-std=std,panic_abort -Zbuild-std-features=compiler-builtins-mem \
      -Zjson-target-spec) ||
    die "$name: cargo rustc failed"
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
  stamp_line "$(crate_facts "$dir" | tail -1)" > "$stamp"
  say "$name: link+opt+llc+elf2sbf done in $(since "$t1"); wrote $out ($(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -c1-64))"
}

# The two programs, same interface and program id: the Anchor program and its
# lean twin. Until programs/oncepay holds the Anchor crate, whichever crate
# exists is also target/deploy/oncepay.so (what the tests load).
build_programs() {
  local given="$features" built=0 dir so
  for dir in oncepay oncepay-lite; do
    [ -f "$ROOT/programs/$dir/Cargo.toml" ] || continue
    so="$ROOT/target/deploy/$(echo "$dir" | tr - _).so"
    features="$given"
    build_one "$ROOT/programs/$dir" "$so" 1
    built=$((built + 1))
  done
  features="$given"
  if [ "$built" = 0 ]; then
    say "no program crate under programs/: building the toolchain probes only"
    build_probes
  else
    say "program id $PROGRAM_ID"
  fi
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
else
  [ -z "$out" ] || die "--out needs --crate (without it, both programs are built to target/deploy)"
  build_programs
fi
say "total $(since "$start")"
