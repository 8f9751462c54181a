// Module rewrites that make upstream LLVM's BPF backend accept Rust programs
// and produce code the SBPF v0 loader runs. Each returns true when it changed
// the module. See toolchain/sbf/README.md for the why of each rewrite.
#pragma once

#include "llvm/IR/Module.h"

namespace oncepay_sbf {

// Calls: more than 5 argument registers (direct and indirect calls) and
// aggregate / wide / `sret` returns.
bool rewriteCallAbi(llvm::Module &M);

// llvm.memcpy/memmove/memset and memcmp/bcmp calls -> sol_mem*_ syscalls.
bool rewriteMemIntrinsics(llvm::Module &M);

// Signed division, i128 multiply/division and *.with.overflow intrinsics
// that the backend would turn into libcalls it cannot emit.
bool rewriteIntegerArith(llvm::Module &M);

// llvm.trap / llvm.ubsantrap -> the `abort` syscall (upstream calls an
// undefined `__bpf_trap`).
bool rewriteTraps(llvm::Module &M);

// f32/f64 arithmetic, comparisons and conversions -> compiler_builtins'
// soft-float functions (runs before internalize, as its own pass).
bool rewriteSoftFloat(llvm::Module &M);

} // namespace oncepay_sbf
