// Floating point -> calls to compiler_builtins' soft-float functions.
// BPF has no FPU; the backend softens f32/f64 values into integer registers
// but turns every arithmetic op, comparison and conversion into a libcall
// (`__adddf3`, ...) it then refuses ("A call to built-in function '__adddf3'
// is not supported"). The same functions are in the linked module (Rust's
// compiler_builtins, compiled to bitcode with everything else), so calling
// them explicitly in IR works. This pass runs before `internalize`, while the
// unreferenced builtins still exist; globaldce drops the unused ones after.
// Their conversions implement Rust's `as` (saturating, NaN -> 0), so the
// `fpto{s,u}i.sat` intrinsics map to them directly.
#include "sbf-passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace oncepay_sbf {
namespace {

const char *suffix(Type *T) { return T->isDoubleTy() ? "df" : "sf"; }
bool isSoftFloat(Type *T) { return T->isDoubleTy() || T->isFloatTy(); }

// Integer widths the builtins take/return: si (32), di (64), ti (128).
const char *intCode(Type *T) {
  switch (T->getIntegerBitWidth()) {
  case 32:
    return "si";
  case 64:
    return "di";
  case 128:
    return "ti";
  default:
    return nullptr;
  }
}

// Calls `name` (declared with `ret(params)` if the module lacks it).
Value *callBuiltin(IRBuilder<> &B, const std::string &name, Type *ret, ArrayRef<Value *> args) {
  Module &M = *B.GetInsertBlock()->getModule();
  Function *F = M.getFunction(name);
  if (!F) {
    SmallVector<Type *, 2> params;
    for (Value *a : args)
      params.push_back(a->getType());
    F = Function::Create(FunctionType::get(ret, params, false), GlobalValue::ExternalLinkage, name, M);
  }
  return B.CreateCall(F, args);
}

// fadd/fsub/fmul/fdiv -> __{add,sub,mul,div}{df,sf}3.
Value *lowerArith(IRBuilder<> &B, BinaryOperator *I) {
  const char *op = nullptr;
  switch (I->getOpcode()) {
  case Instruction::FAdd:
    op = "add";
    break;
  case Instruction::FSub:
    op = "sub";
    break;
  case Instruction::FMul:
    op = "mul";
    break;
  case Instruction::FDiv:
    op = "div";
    break;
  default:
    return nullptr; // frem: no builtin (fmod is libm)
  }
  return callBuiltin(B, std::string("__") + op + suffix(I->getType()) + "3", I->getType(),
                     {I->getOperand(0), I->getOperand(1)});
}

// fcmp -> the libgcc-style comparisons: __eq/__ne return 0 when equal,
// __lt/__le return < 0 / <= 0 when true (and 1 when unordered), __gt/__ge
// return > 0 / >= 0 when true (and -1 when unordered), __unord != 0 when
// either is NaN. Unordered predicates are the negation of the opposite
// ordered one.
Value *lowerCompare(IRBuilder<> &B, FCmpInst *I) {
  Value *a = I->getOperand(0), *b = I->getOperand(1);
  std::string sx = suffix(a->getType());
  Type *I32 = B.getInt32Ty();
  auto cmp = [&](const char *fn, CmpInst::Predicate p) {
    Value *r = callBuiltin(B, std::string("__") + fn + sx + "2", I32, {a, b});
    return B.CreateICmp(p, r, ConstantInt::get(r->getType(), 0));
  };
  switch (I->getPredicate()) {
  case FCmpInst::FCMP_OEQ:
    return cmp("eq", ICmpInst::ICMP_EQ);
  case FCmpInst::FCMP_UNE:
    return cmp("ne", ICmpInst::ICMP_NE);
  case FCmpInst::FCMP_OLT:
    return cmp("lt", ICmpInst::ICMP_SLT);
  case FCmpInst::FCMP_OLE:
    return cmp("le", ICmpInst::ICMP_SLE);
  case FCmpInst::FCMP_OGT:
    return cmp("gt", ICmpInst::ICMP_SGT);
  case FCmpInst::FCMP_OGE:
    return cmp("ge", ICmpInst::ICMP_SGE);
  case FCmpInst::FCMP_UGE:
    return cmp("lt", ICmpInst::ICMP_SGE);
  case FCmpInst::FCMP_UGT:
    return cmp("le", ICmpInst::ICMP_SGT);
  case FCmpInst::FCMP_ULE:
    return cmp("gt", ICmpInst::ICMP_SLE);
  case FCmpInst::FCMP_ULT:
    return cmp("ge", ICmpInst::ICMP_SLT);
  case FCmpInst::FCMP_UNO:
    return cmp("unord", ICmpInst::ICMP_NE);
  case FCmpInst::FCMP_ORD:
    return cmp("unord", ICmpInst::ICMP_EQ);
  case FCmpInst::FCMP_UEQ:
    return B.CreateOr(cmp("unord", ICmpInst::ICMP_NE), cmp("eq", ICmpInst::ICMP_EQ));
  case FCmpInst::FCMP_ONE:
    return B.CreateAnd(cmp("unord", ICmpInst::ICMP_EQ), cmp("ne", ICmpInst::ICMP_NE));
  case FCmpInst::FCMP_TRUE:
    return B.getTrue();
  case FCmpInst::FCMP_FALSE:
    return B.getFalse();
  default:
    return nullptr;
  }
}

// Narrow integers (i1..i31) go through the 32-bit builtins.
bool isNarrowInt(Type *T) { return T->isIntegerTy() && T->getIntegerBitWidth() < 32; }

// float -> integer via __fix[uns]{df,sf}{si,di,ti}: the result in `to`, or
// in i32 when `to` is narrower; null when no builtin has that width.
Value *callFix(IRBuilder<> &B, Value *x, Type *to, bool isUnsigned) {
  Type *wide = isNarrowInt(to) ? B.getInt32Ty() : to;
  const char *ic = intCode(wide);
  if (!ic)
    return nullptr;
  return callBuiltin(B, std::string("__fix") + (isUnsigned ? "uns" : "") + suffix(x->getType()) + ic, wide, {x});
}

// int <-> float conversions and f32 <-> f64.
Value *lowerCast(IRBuilder<> &B, CastInst *I) {
  Type *from = I->getSrcTy(), *to = I->getDestTy();
  Value *x = I->getOperand(0);
  bool isUnsigned = I->getOpcode() == Instruction::UIToFP || I->getOpcode() == Instruction::FPToUI;
  switch (I->getOpcode()) {
  case Instruction::SIToFP:
  case Instruction::UIToFP: {
    if (isNarrowInt(from)) {
      x = isUnsigned ? B.CreateZExt(x, B.getInt32Ty()) : B.CreateSExt(x, B.getInt32Ty());
      from = B.getInt32Ty();
    }
    const char *ic = intCode(from);
    if (!ic)
      return nullptr;
    return callBuiltin(B, std::string("__float") + (isUnsigned ? "un" : "") + ic + suffix(to), to, {x});
  }
  case Instruction::FPToSI:
  case Instruction::FPToUI: {
    // Out-of-range results are poison here, so truncating a 32-bit one is fine.
    Value *r = callFix(B, x, to, isUnsigned);
    return r ? B.CreateTrunc(r, to) : nullptr;
  }
  case Instruction::FPExt:
    return callBuiltin(B, "__extendsfdf2", to, {x});
  case Instruction::FPTrunc:
    return callBuiltin(B, "__truncdfsf2", to, {x});
  default:
    return nullptr;
  }
}

// llvm.fpto{s,u}i.sat: Rust's `as`; the builtins already saturate (NaN -> 0)
// to their own width, narrower targets are clamped after the 32-bit one.
Value *lowerSatConversion(IRBuilder<> &B, IntrinsicInst *II) {
  Type *from = II->getArgOperand(0)->getType(), *to = II->getType();
  if (!to->isIntegerTy() || !isSoftFloat(from))
    return nullptr;
  bool isUnsigned = II->getIntrinsicID() == Intrinsic::fptoui_sat;
  Value *r = callFix(B, II->getArgOperand(0), to, isUnsigned);
  if (!r || r->getType() == to)
    return r;
  unsigned w = to->getIntegerBitWidth();
  if (isUnsigned) {
    Value *max = B.getInt32(uint32_t(APInt::getMaxValue(w).getZExtValue()));
    r = B.CreateSelect(B.CreateICmpUGT(r, max), max, r);
  } else {
    Value *max = B.getInt32(int32_t(APInt::getSignedMaxValue(w).getSExtValue()));
    Value *min = B.getInt32(int32_t(APInt::getSignedMinValue(w).getSExtValue()));
    r = B.CreateSelect(B.CreateICmpSGT(r, max), max, r);
    r = B.CreateSelect(B.CreateICmpSLT(r, min), min, r);
  }
  return B.CreateTrunc(r, to);
}

Value *lowerOne(Instruction &I) {
  IRBuilder<> B(&I);
  if (auto *BO = dyn_cast<BinaryOperator>(&I); BO && isSoftFloat(BO->getType()))
    return lowerArith(B, BO);
  if (auto *FC = dyn_cast<FCmpInst>(&I); FC && isSoftFloat(FC->getOperand(0)->getType()))
    return lowerCompare(B, FC);
  if (auto *CI = dyn_cast<CastInst>(&I)) {
    if (isSoftFloat(CI->getSrcTy()) || isSoftFloat(CI->getDestTy()))
      return lowerCast(B, CI);
    return nullptr;
  }
  if (auto *II = dyn_cast<IntrinsicInst>(&I))
    if (II->getIntrinsicID() == Intrinsic::fptosi_sat || II->getIntrinsicID() == Intrinsic::fptoui_sat)
      return lowerSatConversion(B, II);
  return nullptr;
}

} // namespace

bool rewriteSoftFloat(Module &M) {
  bool changed = false;
  for (Function &F : M) {
    // The builtins implement floats with integer operations; never rewrite
    // inside them (a rewrite there could make one call itself).
    if (F.isDeclaration() || F.getName().starts_with("__"))
      continue;
    SmallVector<std::pair<Instruction *, Value *>, 16> done;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB)
        if (Value *v = lowerOne(I))
          done.push_back({&I, v});
    for (auto &[I, v] : done) {
      v->takeName(I);
      I->replaceAllUsesWith(v);
      I->eraseFromParent();
    }
    changed |= !done.empty();
  }
  return changed;
}

} // namespace oncepay_sbf
