// llvm.trap / llvm.ubsantrap -> the runtime's `abort` syscall. Upstream LLVM's
// BPF backend lowers a trap to a call of a weak `__bpf_trap` (a hook for the
// Linux kernel), which no SBF loader defines: elf2sbf refuses the object
// (UNDEFINED_SYMBOL). Rust emits traps for `core::intrinsics::abort`, which
// std's `process::abort`, `Rc`'s reference-count overflow check (reached by
// every `AccountInfo` clone in solana-program) and panic=abort paths call.
#include "sbf-passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace oncepay_sbf {

bool rewriteTraps(Module &M) {
  SmallVector<IntrinsicInst *, 8> traps;
  for (Function &F : M)
    for (Instruction &I : instructions(F))
      if (auto *II = dyn_cast<IntrinsicInst>(&I))
        if (II->getIntrinsicID() == Intrinsic::trap || II->getIntrinsicID() == Intrinsic::ubsantrap)
          traps.push_back(II);
  if (traps.empty())
    return false;
  // `void abort()`: ends the program with an error ("SBF program panicked").
  FunctionCallee abortFn =
      M.getOrInsertFunction("abort", FunctionType::get(Type::getVoidTy(M.getContext()), false));
  if (auto *F = dyn_cast<Function>(abortFn.getCallee())) {
    F->setLinkage(GlobalValue::ExternalLinkage);
    F->setDoesNotReturn();
  }
  for (IntrinsicInst *II : traps) {
    IRBuilder<> B(II);
    B.CreateCall(abortFn)->setDoesNotReturn();
    II->eraseFromParent();
  }
  return true;
}

} // namespace oncepay_sbf
