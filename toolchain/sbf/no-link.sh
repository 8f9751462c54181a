#!/bin/sh
# The linker cargo uses for this target (CARGO_TARGET_BPFEL_SOLANA_ONCEPAY_LINKER,
# set by build.sh). Dependencies such as solana-program declare
# crate-type = ["cdylib", "rlib"], so cargo links a cdylib for them even as a
# dependency, which would need bpf-linker. Those cdylibs are never used (the
# program is linked from bitcode by llvm-link, see README.md), so this creates
# the output file and links nothing. Arguments may come in an @response-file.
out=""
for arg in "$@"; do
  case "$arg" in
    @*) set -- "$@" $(cat "${arg#@}") ;;
  esac
done
while [ $# -gt 0 ]; do
  if [ "$1" = -o ] && [ $# -gt 1 ]; then out="$2"; fi
  shift
done
[ -n "$out" ] || { echo "no-link.sh: no -o OUTPUT among the arguments" >&2; exit 1; }
: > "$out"
