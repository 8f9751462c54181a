// Memory intrinsics -> Solana syscalls. The BPF backend only expands
// constant-size mem intrinsics inline (up to 128 stores) and otherwise fails
// with "A call to built-in function 'memcpy' is not supported". Byte loops
// would work but cost ~6.5 CU per byte; the runtime's sol_memcpy_ /
// sol_memmove_ / sol_memset_ / sol_memcmp_ syscalls cost about 10 CU + n/250.
#include "sbf-passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace oncepay_sbf {
namespace {

// Constant copies that take at most this many loads+stores pairs stay inline:
// below that the inline code is cheaper than the syscall's base cost.
constexpr uint64_t kInlineMaxOps = 8;

bool smallEnoughInline(Value *len, MaybeAlign align) {
  auto *C = dyn_cast<ConstantInt>(len);
  if (!C)
    return false;
  uint64_t width = std::min<uint64_t>(8, align ? align->value() : 1);
  return (C->getZExtValue() + width - 1) / width <= kInlineMaxOps;
}

FunctionCallee syscall(Module &M, StringRef name, Type *ret, ArrayRef<Type *> params) {
  FunctionCallee f = M.getOrInsertFunction(name, FunctionType::get(ret, params, false));
  if (auto *F = dyn_cast<Function>(f.getCallee()))
    F->setLinkage(GlobalValue::ExternalLinkage);
  return f;
}

Value *asI64(IRBuilder<> &B, Value *v) { return B.CreateZExtOrTrunc(v, B.getInt64Ty()); }

// sol_memcpy_(dst, src, n) / sol_memmove_(dst, src, n).
void emitTransfer(IRBuilder<> &B, bool move, Value *dst, Value *src, Value *len) {
  Module &M = *B.GetInsertBlock()->getModule();
  Type *Ptr = B.getPtrTy(), *I64 = B.getInt64Ty();
  B.CreateCall(syscall(M, move ? "sol_memmove_" : "sol_memcpy_", B.getVoidTy(), {Ptr, Ptr, I64}),
               {dst, src, asI64(B, len)});
}

// sol_memset_(dst, byte, n); the byte travels in a 64-bit register.
void emitSet(IRBuilder<> &B, Value *dst, Value *byte, Value *len) {
  Module &M = *B.GetInsertBlock()->getModule();
  Type *Ptr = B.getPtrTy(), *I64 = B.getInt64Ty();
  B.CreateCall(syscall(M, "sol_memset_", B.getVoidTy(), {Ptr, I64, I64}), {dst, asI64(B, byte), asI64(B, len)});
}

void lowerTransfer(MemTransferInst *MI) {
  IRBuilder<> B(MI);
  emitTransfer(B, isa<MemMoveInst>(MI), MI->getRawDest(), MI->getRawSource(), MI->getLength());
  MI->eraseFromParent();
}

void lowerSet(MemSetInst *MI) {
  IRBuilder<> B(MI);
  emitSet(B, MI->getRawDest(), MI->getValue(), MI->getLength());
  MI->eraseFromParent();
}

// memcmp/bcmp(a, b, n) -> sol_memcmp_(a, b, n, &result): the syscall writes
// an i32 with memcmp's sign convention, which also satisfies bcmp.
void lowerCompare(CallInst *CI) {
  Module &M = *CI->getModule();
  Function *caller = CI->getFunction();
  IRBuilder<> entry(&*caller->getEntryBlock().getFirstInsertionPt());
  AllocaInst *slot = entry.CreateAlloca(entry.getInt32Ty(), nullptr, "memcmp.result");
  IRBuilder<> B(CI);
  Type *Ptr = B.getPtrTy(), *I64 = B.getInt64Ty();
  B.CreateCall(syscall(M, "sol_memcmp_", B.getVoidTy(), {Ptr, Ptr, I64, Ptr}),
               {CI->getArgOperand(0), CI->getArgOperand(1), asI64(B, CI->getArgOperand(2)), slot});
  Value *r = B.CreateLoad(B.getInt32Ty(), slot);
  CI->replaceAllUsesWith(B.CreateSExtOrTrunc(r, CI->getType()));
  CI->eraseFromParent();
}

// Calls to the C functions (not intrinsics) by name, e.g. from core's
// slice comparison, become the matching intrinsic-style syscall too.
void lowerNamedMemCall(CallInst *CI, StringRef name) {
  IRBuilder<> B(CI);
  if (name == "memset")
    emitSet(B, CI->getArgOperand(0), CI->getArgOperand(1), CI->getArgOperand(2));
  else
    emitTransfer(B, name == "memmove", CI->getArgOperand(0), CI->getArgOperand(1), CI->getArgOperand(2));
  // The C functions return their destination.
  if (!CI->use_empty())
    CI->replaceAllUsesWith(CI->getArgOperand(0));
  CI->eraseFromParent();
}

} // namespace

bool rewriteMemIntrinsics(Module &M) {
  SmallVector<MemTransferInst *, 16> transfers;
  SmallVector<MemSetInst *, 16> sets;
  SmallVector<std::pair<CallInst *, StringRef>, 16> named;
  for (Function &F : M)
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        if (auto *MT = dyn_cast<MemTransferInst>(&I)) {
          MaybeAlign a = MT->getDestAlign(), b = MT->getSourceAlign();
          MaybeAlign both = (a && b) ? MaybeAlign(std::min(a->value(), b->value())) : MaybeAlign();
          if (!smallEnoughInline(MT->getLength(), both))
            transfers.push_back(MT);
        } else if (auto *MS = dyn_cast<MemSetInst>(&I)) {
          if (!smallEnoughInline(MS->getLength(), MS->getDestAlign()))
            sets.push_back(MS);
        } else if (auto *CI = dyn_cast<CallInst>(&I)) {
          Function *callee = CI->getCalledFunction();
          if (!callee || callee->isIntrinsic())
            continue;
          StringRef n = callee->getName();
          if (CI->arg_size() == 3 &&
              (n == "memcmp" || n == "bcmp" || n == "memcpy" || n == "memmove" || n == "memset"))
            named.push_back({CI, n});
        }
      }
  for (MemTransferInst *MT : transfers)
    lowerTransfer(MT);
  for (MemSetInst *MS : sets)
    lowerSet(MS);
  for (auto &[CI, n] : named) {
    if (n == "memcmp" || n == "bcmp")
      lowerCompare(CI);
    else
      lowerNamedMemCall(CI, n);
  }
  // Bodies of memcmp & co. from compiler_builtins are now dead.
  for (StringRef n : {"memcmp", "bcmp", "memcpy", "memmove", "memset"})
    if (Function *F = M.getFunction(n); F && F->use_empty() && F->hasLocalLinkage())
      F->eraseFromParent();
  return !transfers.empty() || !sets.empty() || !named.empty();
}

} // namespace oncepay_sbf
