// Calling-convention rewrites. The BPF backend has 5 argument registers
// (r1-r5), no stack arguments and a single 64-bit return register; it refuses
// "too many arguments", "aggregate returns" and "only small returns". After
// `internalize` every function but `entrypoint` is private to the module and
// no Solana syscall takes more than 5 arguments, so the convention can be
// changed inside the module: definitions, direct calls and indirect calls
// (function pointers, vtables) all follow the same rule, which depends only
// on the function type.
#include "sbf-passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace oncepay_sbf {
namespace {

constexpr unsigned kArgRegs = 5;

// How a function type is lowered: an optional out-pointer first argument for
// the return value, then `keep` original parameters in registers, then (if
// `spill`) one pointer to a caller-built struct holding the rest.
struct AbiPlan {
  bool needed = false;
  bool outPtr = false;
  unsigned keep = 0;
  StructType *spillTy = nullptr;
  FunctionType *newTy = nullptr;
};

unsigned regsFor(Type *T, const DataLayout &DL) {
  if (T->isPointerTy())
    return 1;
  uint64_t bytes = DL.getTypeAllocSize(T).getFixedValue();
  return bytes == 0 ? 0 : unsigned((bytes + 7) / 8);
}

// A return value fits r0 only if it is a scalar of at most 64 bits.
bool returnNeedsMemory(Type *T, const DataLayout &DL) {
  if (T->isVoidTy())
    return false;
  if (T->isStructTy() || T->isArrayTy())
    return true;
  return DL.getTypeSizeInBits(T).getFixedValue() > 64;
}

AbiPlan planFor(FunctionType *FT, const DataLayout &DL) {
  AbiPlan plan;
  if (FT->isVarArg())
    return plan;
  LLVMContext &C = FT->getContext();
  plan.outPtr = returnNeedsMemory(FT->getReturnType(), DL);
  unsigned regs = plan.outPtr ? 1 : 0;
  for (Type *P : FT->params())
    regs += regsFor(P, DL);
  unsigned n = FT->getNumParams();
  plan.keep = n;
  if (regs > kArgRegs) {
    // Keep the longest prefix that leaves one register for the spill pointer.
    unsigned used = plan.outPtr ? 1 : 0;
    plan.keep = 0;
    while (plan.keep < n && used + regsFor(FT->getParamType(plan.keep), DL) <= kArgRegs - 1)
      used += regsFor(FT->getParamType(plan.keep++), DL);
    SmallVector<Type *, 8> rest(FT->param_begin() + plan.keep, FT->param_end());
    plan.spillTy = StructType::get(C, rest);
  }
  plan.needed = plan.outPtr || plan.spillTy;
  if (!plan.needed)
    return plan;
  SmallVector<Type *, 8> params;
  PointerType *Ptr = PointerType::get(C, 0);
  if (plan.outPtr)
    params.push_back(Ptr);
  for (unsigned i = 0; i < plan.keep; ++i)
    params.push_back(FT->getParamType(i));
  if (plan.spillTy)
    params.push_back(Ptr);
  plan.newTy = FunctionType::get(plan.outPtr ? Type::getVoidTy(C) : FT->getReturnType(), params, false);
  return plan;
}

AttributeList remapAttributes(LLVMContext &C, AttributeList old, const AbiPlan &plan) {
  SmallVector<AttributeSet, 8> params;
  if (plan.outPtr)
    params.push_back(AttributeSet());
  for (unsigned i = 0; i < plan.keep; ++i)
    params.push_back(old.getParamAttrs(i).removeAttribute(C, Attribute::StructRet));
  if (plan.spillTy)
    params.push_back(AttributeSet());
  AttributeSet ret = plan.outPtr ? AttributeSet() : old.getRetAttrs();
  return AttributeList::get(C, old.getFnAttrs(), ret, params);
}

// One stack slot per (caller, type), shared by all its rewritten calls: the
// stores go right before each call, the callee reads its spilled arguments on
// entry and the caller reads a returned value right after the call, so no two
// uses overlap, and the 4 KiB SBPF stack frame is not spent per call site.
using SlotCache = DenseMap<std::pair<Function *, Type *>, AllocaInst *>;

AllocaInst *entrySlot(SlotCache &slots, Function *F, Type *T, const Twine &name) {
  AllocaInst *&slot = slots[{F, T}];
  if (!slot) {
    IRBuilder<> B(&*F->getEntryBlock().getFirstInsertionPt());
    slot = B.CreateAlloca(T, nullptr, name);
  }
  return slot;
}

// Moves F's body into a new function with the planned signature; the old
// arguments become loads from the spill struct, returns become stores.
Function *rewriteDefinition(Function *F, const AbiPlan &plan) {
  LLVMContext &C = F->getContext();
  Function *NF = Function::Create(plan.newTy, F->getLinkage(), F->getAddressSpace(), "", F->getParent());
  NF->copyAttributesFrom(F);
  NF->setAttributes(remapAttributes(C, F->getAttributes(), plan));
  NF->takeName(F);
  NF->splice(NF->begin(), F);

  unsigned at = 0;
  Argument *out = plan.outPtr ? NF->getArg(at++) : nullptr;
  if (out)
    out->setName("ret.out");
  IRBuilder<> B(&*NF->getEntryBlock().getFirstInsertionPt());
  for (unsigned i = 0; i < plan.keep; ++i) {
    NF->getArg(at)->takeName(F->getArg(i));
    F->getArg(i)->replaceAllUsesWith(NF->getArg(at++));
  }
  if (plan.spillTy) {
    Argument *spill = NF->getArg(at);
    spill->setName("args.spill");
    for (unsigned i = plan.keep; i < F->arg_size(); ++i) {
      Value *field = B.CreateStructGEP(plan.spillTy, spill, i - plan.keep);
      Value *v = B.CreateLoad(F->getArg(i)->getType(), field, F->getArg(i)->getName());
      F->getArg(i)->replaceAllUsesWith(v);
    }
  }
  if (out) {
    SmallVector<ReturnInst *, 4> rets;
    for (BasicBlock &BB : *NF)
      if (auto *R = dyn_cast<ReturnInst>(BB.getTerminator()))
        rets.push_back(R);
    for (ReturnInst *R : rets) {
      IRBuilder<> RB(R);
      RB.CreateStore(R->getReturnValue(), out);
      RB.CreateRetVoid();
      R->eraseFromParent();
    }
  }
  return NF;
}

// Rewrites one call (direct or through a pointer) to the planned signature.
void rewriteCall(CallInst *CI, Value *callee, const AbiPlan &plan, SlotCache &slots) {
  LLVMContext &C = CI->getContext();
  Function *caller = CI->getFunction();
  FunctionType *FT = CI->getFunctionType();
  IRBuilder<> B(CI);
  SmallVector<Value *, 8> args;
  AllocaInst *out = nullptr;
  if (plan.outPtr) {
    out = entrySlot(slots, caller, FT->getReturnType(), "ret.slot");
    args.push_back(out);
  }
  for (unsigned i = 0; i < plan.keep; ++i)
    args.push_back(CI->getArgOperand(i));
  if (plan.spillTy) {
    AllocaInst *spill = entrySlot(slots, caller, plan.spillTy, "args.spill");
    for (unsigned i = plan.keep; i < FT->getNumParams(); ++i)
      B.CreateStore(CI->getArgOperand(i), B.CreateStructGEP(plan.spillTy, spill, i - plan.keep));
    args.push_back(spill);
  }
  CallInst *NC = B.CreateCall(plan.newTy, callee, args);
  NC->setCallingConv(CI->getCallingConv());
  NC->setAttributes(remapAttributes(C, CI->getAttributes(), plan));
  NC->setDebugLoc(CI->getDebugLoc());
  // The callee now reads the caller's stack slots: never a tail call.
  NC->setTailCallKind(CallInst::TCK_None);
  if (out) {
    Value *v = B.CreateLoad(FT->getReturnType(), out);
    CI->replaceAllUsesWith(v);
  } else {
    NC->takeName(CI);
    CI->replaceAllUsesWith(NC);
  }
  CI->eraseFromParent();
}

// `sret` makes the backend refuse the function ("aggregate returns"); the
// pointer argument itself is fine once the attribute is gone.
bool stripSret(Module &M) {
  bool changed = false;
  for (Function &F : M) {
    for (unsigned i = 0; i < F.arg_size(); ++i)
      if (F.hasParamAttribute(i, Attribute::StructRet)) {
        F.removeParamAttr(i, Attribute::StructRet);
        changed = true;
      }
    for (BasicBlock &BB : F)
      for (Instruction &I : BB)
        if (auto *CB = dyn_cast<CallBase>(&I))
          for (unsigned i = 0; i < CB->arg_size(); ++i)
            if (CB->paramHasAttr(i, Attribute::StructRet)) {
              CB->removeParamAttr(i, Attribute::StructRet);
              changed = true;
            }
  }
  return changed;
}

} // namespace

bool rewriteCallAbi(Module &M) {
  const DataLayout &DL = M.getDataLayout();
  bool changed = stripSret(M);

  // 1. Definitions whose type needs a new convention.
  DenseMap<Function *, Function *> moved;
  SmallVector<Function *, 16> todo;
  for (Function &F : M) {
    if (F.isDeclaration() || F.isIntrinsic() || F.isVarArg())
      continue;
    if (!planFor(F.getFunctionType(), DL).needed)
      continue;
    if (!F.hasLocalLinkage())
      report_fatal_error(Twine("oncepay-sbf: exported function ") + F.getName() +
                         " needs more than 5 argument registers or returns an aggregate");
    todo.push_back(&F);
  }
  for (Function *F : todo)
    moved[F] = rewriteDefinition(F, planFor(F->getFunctionType(), DL));

  // 2. Every call whose callee type needs it: direct calls to moved
  //    functions and indirect calls (the pointee follows the same plan).
  SmallVector<CallInst *, 32> calls;
  for (Function &F : M)
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        auto *CB = dyn_cast<CallBase>(&I);
        if (!CB || CB->isInlineAsm() || isa<IntrinsicInst>(CB))
          continue;
        if (!planFor(CB->getFunctionType(), DL).needed)
          continue;
        auto *CI = dyn_cast<CallInst>(CB);
        if (!CI)
          report_fatal_error("oncepay-sbf: invoke with a rewritten signature (build with panic=abort)");
        auto *callee = dyn_cast<Function>(CI->getCalledOperand());
        if (callee && callee->isDeclaration() && !moved.count(callee)) {
          errs() << "oncepay-sbf: warning: external " << callee->getName()
                 << " takes more than 5 argument registers; left as is\n";
          continue;
        }
        calls.push_back(CI);
      }
  SlotCache slots;
  for (CallInst *CI : calls) {
    Value *callee = CI->getCalledOperand();
    if (auto *F = dyn_cast<Function>(callee); F && moved.count(F))
      callee = moved[F];
    rewriteCall(CI, callee, planFor(CI->getFunctionType(), DL), slots);
  }

  // 3. Remaining uses are addresses (vtables, function pointers): same
  //    pointer type, so they simply point at the new body.
  for (auto &[F, NF] : moved) {
    F->replaceAllUsesWith(NF);
    F->eraseFromParent();
  }
  return changed || !todo.empty() || !calls.empty();
}

} // namespace oncepay_sbf
