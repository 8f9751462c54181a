// Integer arithmetic the BPF backend cannot select for SBPF v0:
//  * sdiv/srem (v0 has only unsigned div/mod): unsigned op + sign fix-up;
//  * i128 udiv/urem/sdiv/srem: native 64-bit division when both operands fit
//    in 64 bits, else LLVM's shift-subtract expansion (the backend would call
//    __udivti3, a libcall returning i128 it cannot lower);
//  * i128 (and wider) mul and 64-bit "multiply high": 32x32->64 partial products
//    (the backend would call __multi3: "only small returns supported");
//  * i128 shifts by a variable amount (the backend would call __ashlti3 &
//    co.; the division expansion produces them): 64-bit shifts + selects;
//  * {u,s}mul.with.overflow on i64/i128 (checked_mul) and
//    {u,s}{add,sub}.with.overflow on i128 (checked_add/sub on u128): the same
//    64-bit pieces plus explicit carry/overflow bits.
#include "sbf-passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/IntegerDivision.h"

using namespace llvm;

namespace oncepay_sbf {
namespace {

using Builder = IRBuilder<>;

struct Pair { // a 128-bit value as two 64-bit halves
  Value *lo, *hi;
};

Pair split(Builder &B, Value *v) {
  return {B.CreateTrunc(v, B.getInt64Ty()), B.CreateTrunc(B.CreateLShr(v, 64), B.getInt64Ty())};
}

Value *join(Builder &B, Pair p) {
  Type *I128 = B.getIntNTy(128);
  return B.CreateOr(B.CreateZExt(p.lo, I128), B.CreateShl(B.CreateZExt(p.hi, I128), 64));
}

// High 64 bits of the 128-bit product of two u64, from four 32x32 products
// (each fits in 64 bits, so only native 64-bit multiplies are used).
Value *mulHigh64(Builder &B, Value *x, Value *y) {
  Value *mask = B.getInt64(0xFFFFFFFF);
  Value *x0 = B.CreateAnd(x, mask), *x1 = B.CreateLShr(x, 32);
  Value *y0 = B.CreateAnd(y, mask), *y1 = B.CreateLShr(y, 32);
  Value *p00 = B.CreateMul(x0, y0), *p01 = B.CreateMul(x0, y1);
  Value *p10 = B.CreateMul(x1, y0), *p11 = B.CreateMul(x1, y1);
  // mid < 3 * 2^32: no overflow.
  Value *mid = B.CreateAdd(B.CreateAdd(B.CreateLShr(p00, 32), B.CreateAnd(p01, mask)), B.CreateAnd(p10, mask));
  Value *hi = B.CreateAdd(p11, B.CreateLShr(p01, 32));
  hi = B.CreateAdd(hi, B.CreateLShr(p10, 32));
  return B.CreateAdd(hi, B.CreateLShr(mid, 32));
}

// u64 * u64 with overflow flag.
std::pair<Value *, Value *> umulOv64(Builder &B, Value *x, Value *y) {
  return {B.CreateMul(x, y), B.CreateICmpNE(mulHigh64(B, x, y), B.getInt64(0))};
}

// u128 * u128 with overflow flag, from 64-bit pieces only.
std::pair<Pair, Value *> umulOv128(Builder &B, Pair a, Pair b) {
  Value *zero = B.getInt64(0);
  // Both high halves non-zero: the product is at least 2^128.
  Value *ov = B.CreateAnd(B.CreateICmpNE(a.hi, zero), B.CreateICmpNE(b.hi, zero));
  auto [t1, ov1] = umulOv64(B, a.hi, b.lo);
  auto [t2, ov2] = umulOv64(B, a.lo, b.hi);
  Value *cross = B.CreateAdd(t1, t2);
  Value *c1 = B.CreateICmpULT(cross, t1);
  Value *hi = B.CreateAdd(cross, mulHigh64(B, a.lo, b.lo));
  Value *c2 = B.CreateICmpULT(hi, cross);
  ov = B.CreateOr(B.CreateOr(ov, ov1), B.CreateOr(ov2, B.CreateOr(c1, c2)));
  return {{B.CreateMul(a.lo, b.lo), hi}, ov};
}

// u64 or u128 multiply with overflow flag.
std::pair<Value *, Value *> umulOv(Builder &B, Value *x, Value *y) {
  if (x->getType()->getIntegerBitWidth() == 64)
    return umulOv64(B, x, y);
  auto [p, ov] = umulOv128(B, split(B, x), split(B, y));
  return {join(B, p), ov};
}

Value *isNeg(Builder &B, Value *v) { return B.CreateICmpSLT(v, ConstantInt::get(v->getType(), 0)); }
Value *absVal(Builder &B, Value *v) { return B.CreateSelect(isNeg(B, v), B.CreateNeg(v), v); }

// Signed multiply with overflow through the unsigned one on magnitudes: the
// magnitude must stay below 2^(w-1) (or equal it when the result is negative).
Value *smulOverflow(Builder &B, Value *x, Value *y, Value *&product) {
  unsigned w = x->getType()->getIntegerBitWidth();
  Value *neg = B.CreateXor(isNeg(B, x), isNeg(B, y));
  Value *ux = absVal(B, x), *uy = absVal(B, y);
  auto [mag, ov] = umulOv(B, ux, uy);
  APInt minMag = APInt::getSignedMinValue(w); // 2^(w-1) as unsigned
  Value *limit = B.CreateSelect(neg, ConstantInt::get(x->getType(), minMag),
                                ConstantInt::get(x->getType(), minMag - 1));
  ov = B.CreateOr(ov, B.CreateICmpUGT(mag, limit));
  product = B.CreateSelect(neg, B.CreateNeg(mag), mag);
  return ov;
}

Value *packResult(Builder &B, Type *structTy, Value *v, Value *ov) {
  Value *r = PoisonValue::get(structTy);
  r = B.CreateInsertValue(r, v, 0);
  return B.CreateInsertValue(r, ov, 1);
}

// sdiv/srem: |x| op |y| unsigned, then the C sign rules (quotient negative
// when signs differ, remainder takes the dividend's sign). Returns the new
// unsigned operation (which still needs expanding when wider than 64 bits).
Value *lowerSignedDivRem(BinaryOperator *I) {
  Builder B(I);
  Value *x = I->getOperand(0), *y = I->getOperand(1);
  Value *ux = absVal(B, x), *uy = absVal(B, y);
  Value *op, *r;
  if (I->getOpcode() == Instruction::SDiv) {
    op = B.CreateUDiv(ux, uy);
    r = B.CreateSelect(B.CreateXor(isNeg(B, x), isNeg(B, y)), B.CreateNeg(op), op);
  } else {
    op = B.CreateURem(ux, uy);
    r = B.CreateSelect(isNeg(B, x), B.CreateNeg(op), op);
  }
  r->takeName(I);
  I->replaceAllUsesWith(r);
  I->eraseFromParent();
  return op;
}

// u128 division whose operands both fit in 64 bits (the common case for
// amounts) takes the native 64-bit udiv/urem; only the other branch keeps the
// wide operation, returned for expansion (~128 loop iterations).
BinaryOperator *addNarrowFastPath(BinaryOperator *I) {
  Builder B(I);
  Pair x = split(B, I->getOperand(0)), y = split(B, I->getOperand(1));
  Value *narrow = B.CreateICmpEQ(B.CreateOr(x.hi, y.hi), B.getInt64(0));
  Instruction *thenTerm = nullptr, *elseTerm = nullptr;
  SplitBlockAndInsertIfThenElse(narrow, I->getIterator(), &thenTerm, &elseTerm);
  B.SetInsertPoint(thenTerm);
  bool div = I->getOpcode() == Instruction::UDiv;
  Value *fast = B.CreateZExt(div ? B.CreateUDiv(x.lo, y.lo) : B.CreateURem(x.lo, y.lo), I->getType());
  B.SetInsertPoint(elseTerm);
  auto *slow = cast<BinaryOperator>(B.CreateBinOp(I->getOpcode(), I->getOperand(0), I->getOperand(1)));
  B.SetInsertPoint(I);
  PHINode *phi = B.CreatePHI(I->getType(), 2);
  phi->addIncoming(fast, thenTerm->getParent());
  phi->addIncoming(slow, elseTerm->getParent());
  phi->takeName(I);
  I->replaceAllUsesWith(phi);
  I->eraseFromParent();
  return slow;
}

// Adds a 64-bit value into limb `at` of `acc`, propagating the carry up to
// the last limb (bits beyond the result width are dropped, as mul does).
void addIntoLimbs(Builder &B, SmallVectorImpl<Value *> &acc, unsigned at, Value *v) {
  for (unsigned p = at; p < acc.size(); ++p) {
    Value *sum = B.CreateAdd(acc[p], v);
    Value *carry = B.CreateICmpULT(sum, v);
    acc[p] = sum;
    v = B.CreateZExt(carry, B.getInt64Ty());
  }
}

// Multiply on any width above 64 bits (i128 from u128 math, i256 formed by
// LLVM from core's u128 "multiply high"), schoolbook on 64-bit limbs.
void lowerWideMul(BinaryOperator *I) {
  Builder B(I);
  unsigned w = I->getType()->getIntegerBitWidth(), k = (w + 63) / 64;
  Type *T = B.getIntNTy(k * 64);
  Value *x = B.CreateZExt(I->getOperand(0), T), *y = B.CreateZExt(I->getOperand(1), T);
  SmallVector<Value *, 4> a, b, acc;
  for (unsigned i = 0; i < k; ++i) {
    a.push_back(B.CreateTrunc(B.CreateLShr(x, 64 * i), B.getInt64Ty()));
    b.push_back(B.CreateTrunc(B.CreateLShr(y, 64 * i), B.getInt64Ty()));
    acc.push_back(B.getInt64(0));
  }
  for (unsigned i = 0; i < k; ++i)
    for (unsigned j = 0; i + j < k; ++j) {
      addIntoLimbs(B, acc, i + j, B.CreateMul(a[i], b[j]));
      if (i + j + 1 < k)
        addIntoLimbs(B, acc, i + j + 1, mulHigh64(B, a[i], b[j]));
    }
  Value *r = ConstantInt::get(T, 0);
  for (unsigned i = 0; i < k; ++i)
    r = B.CreateOr(r, B.CreateShl(B.CreateZExt(acc[i], T), 64 * i));
  r = B.CreateTrunc(r, I->getType());
  r->takeName(I);
  I->replaceAllUsesWith(r);
  I->eraseFromParent();
}

// Returns true when the intrinsic was replaced.
bool lowerOverflowIntrinsic(IntrinsicInst *II) {
  Intrinsic::ID id = II->getIntrinsicID();
  Value *x = II->getArgOperand(0), *y = II->getArgOperand(1);
  unsigned w = x->getType()->getIntegerBitWidth();
  Builder B(II);
  Value *v = nullptr, *ov = nullptr;
  switch (id) {
  case Intrinsic::umul_with_overflow:
    if (w == 64 || w == 128)
      std::tie(v, ov) = umulOv(B, x, y);
    break;
  case Intrinsic::smul_with_overflow:
    if (w == 64 || w == 128)
      ov = smulOverflow(B, x, y, v);
    break;
  case Intrinsic::uadd_with_overflow:
    if (w == 128) { // carry out of the high half, computed on 64-bit halves
      Pair a = split(B, x), b = split(B, y);
      Value *lo = B.CreateAdd(a.lo, b.lo);
      Value *carry = B.CreateZExt(B.CreateICmpULT(lo, a.lo), B.getInt64Ty());
      Value *hi1 = B.CreateAdd(a.hi, b.hi);
      Value *hi = B.CreateAdd(hi1, carry);
      ov = B.CreateOr(B.CreateICmpULT(hi1, a.hi), B.CreateICmpULT(hi, hi1));
      v = join(B, {lo, hi});
    }
    break;
  case Intrinsic::usub_with_overflow:
    if (w == 128) { // borrow: x < y as u128
      v = B.CreateSub(x, y);
      ov = B.CreateICmpULT(x, y);
    }
    break;
  case Intrinsic::sadd_with_overflow:
  case Intrinsic::ssub_with_overflow:
    if (w == 128) { // overflow when the operands' signs make the result's sign impossible
      bool add = id == Intrinsic::sadd_with_overflow;
      v = add ? B.CreateAdd(x, y) : B.CreateSub(x, y);
      Value *sx = isNeg(B, x), *sy = isNeg(B, y), *sv = isNeg(B, v);
      Value *operandsAgree = add ? B.CreateICmpEQ(sx, sy) : B.CreateICmpNE(sx, sy);
      ov = B.CreateAnd(operandsAgree, B.CreateICmpNE(sx, sv));
    }
    break;
  default:
    break;
  }
  if (!v)
    return false;
  II->replaceAllUsesWith(packResult(B, II->getType(), v, ov));
  II->eraseFromParent();
  return true;
}

// i128 shift by a non-constant amount, from 64-bit shifts. Shifting by
// (63 - s) after a 1-bit pre-shift avoids the poison of a 64-bit shift by 64.
void lowerShift128(BinaryOperator *I) {
  Builder B(I);
  Pair x = split(B, I->getOperand(0));
  Value *s = B.CreateTrunc(I->getOperand(1), B.getInt64Ty());
  Value *s64 = B.CreateAnd(s, 63), *inv = B.CreateSub(B.getInt64(63), s64);
  Value *big = B.CreateICmpNE(B.CreateAnd(s, 64), B.getInt64(0));
  Pair r;
  switch (I->getOpcode()) {
  case Instruction::Shl: {
    Value *carry = B.CreateLShr(B.CreateLShr(x.lo, 1), inv);
    Value *lo = B.CreateShl(x.lo, s64);
    r = {B.CreateSelect(big, B.getInt64(0), lo),
         B.CreateSelect(big, lo, B.CreateOr(B.CreateShl(x.hi, s64), carry))};
    break;
  }
  case Instruction::LShr: {
    Value *carry = B.CreateShl(B.CreateShl(x.hi, 1), inv);
    Value *hi = B.CreateLShr(x.hi, s64);
    r = {B.CreateSelect(big, hi, B.CreateOr(B.CreateLShr(x.lo, s64), carry)),
         B.CreateSelect(big, B.getInt64(0), hi)};
    break;
  }
  default: { // AShr
    Value *carry = B.CreateShl(B.CreateShl(x.hi, 1), inv);
    Value *hi = B.CreateAShr(x.hi, s64);
    r = {B.CreateSelect(big, hi, B.CreateOr(B.CreateLShr(x.lo, s64), carry)),
         B.CreateSelect(big, B.CreateAShr(x.hi, 63), hi)};
    break;
  }
  }
  Value *v = join(B, r);
  v->takeName(I);
  I->replaceAllUsesWith(v);
  I->eraseFromParent();
}

bool isWide(Value *v) {
  return v->getType()->isIntegerTy() && v->getType()->getIntegerBitWidth() > 64;
}

} // namespace

bool rewriteIntegerArith(Module &M) {
  bool changed = false;
  for (Function &F : M) {
    // Collect first: every rewrite inserts instructions next to the original.
    SmallVector<BinaryOperator *, 16> signedDivs, wideDivs, wideMuls; // wideMuls: after divisions
    SmallVector<IntrinsicInst *, 16> overflows;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        if (auto *BO = dyn_cast<BinaryOperator>(&I)) {
          unsigned op = BO->getOpcode();
          if ((op == Instruction::SDiv || op == Instruction::SRem) && BO->getType()->isIntegerTy())
            signedDivs.push_back(BO);
          else if ((op == Instruction::UDiv || op == Instruction::URem) && isWide(BO))
            wideDivs.push_back(BO);
        } else if (auto *II = dyn_cast<IntrinsicInst>(&I)) {
          switch (II->getIntrinsicID()) {
          case Intrinsic::umul_with_overflow:
          case Intrinsic::smul_with_overflow:
          case Intrinsic::uadd_with_overflow:
          case Intrinsic::usub_with_overflow:
          case Intrinsic::sadd_with_overflow:
          case Intrinsic::ssub_with_overflow:
            overflows.push_back(II);
            break;
          default:
            break;
          }
        }
      }
    for (IntrinsicInst *II : overflows)
      changed |= lowerOverflowIntrinsic(II);
    for (BinaryOperator *BO : signedDivs) {
      bool wide = isWide(BO);
      Value *op = lowerSignedDivRem(BO);
      if (auto *U = dyn_cast<BinaryOperator>(op); U && wide)
        wideDivs.push_back(U);
      changed = true;
    }
    // LLVM's expansion emits a loop of shifts/subtracts on the wide type,
    // which the backend legalizes into 64-bit halves without libcalls.
    for (BinaryOperator *BO : wideDivs) {
      if (BO->getType()->getIntegerBitWidth() == 128)
        BO = addNarrowFastPath(BO);
      bool rem = BO->getOpcode() == Instruction::URem;
      if (!(rem ? expandRemainder(BO) : expandDivision(BO)))
        report_fatal_error("oncepay-sbf: could not expand a wide division");
      changed = true;
    }
    // The division expansion multiplies and shifts on the wide type:
    // collect those after it ran.
    SmallVector<BinaryOperator *, 16> wideShifts;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        auto *BO = dyn_cast<BinaryOperator>(&I);
        if (!BO || !isWide(BO))
          continue;
        if (BO->getOpcode() == Instruction::Mul)
          wideMuls.push_back(BO);
        else if (BO->isShift() && !isa<Constant>(BO->getOperand(1)))
          wideShifts.push_back(BO);
      }
    for (BinaryOperator *BO : wideShifts) {
      if (BO->getType()->getIntegerBitWidth() != 128)
        report_fatal_error("oncepay-sbf: variable shift wider than 64 bits other than i128");
      lowerShift128(BO);
      changed = true;
    }
    for (BinaryOperator *BO : wideMuls) {
      lowerWideMul(BO);
      changed = true;
    }
  }
  return changed;
}

} // namespace oncepay_sbf
