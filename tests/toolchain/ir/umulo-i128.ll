; checked_mul on u128: (a * 2^64 + b) * c, u64::MAX on overflow, else the low 64 bits.
; upstream: __muloti4|__multi3
; case: 1 0 3 -> 0
; case: 0 5 3 -> 15
; case: 9223372036854775808 0 2 -> 18446744073709551615
target datalayout = "e-m:e-p:64:64-i64:64-i128:128-n32:64-S128"
target triple = "bpfel"

declare void @sol_set_return_data(ptr, i64)

; Instruction data of an instruction without accounts starts at offset 16.
define internal i64 @arg(ptr %input, i64 %i) {
  %off = mul i64 %i, 8
  %at = add i64 %off, 16
  %p = getelementptr i8, ptr %input, i64 %at
  %v = load i64, ptr %p, align 1
  ret i64 %v
}

define internal i64 @finish(i64 %r) {
  %slot = alloca i64, align 8
  store i64 %r, ptr %slot
  call void @sol_set_return_data(ptr %slot, i64 8)
  ret i64 0
}

declare { i128, i1 } @llvm.umul.with.overflow.i128(i128, i128)

define i64 @entrypoint(ptr %input) {
  %a = call i64 @arg(ptr %input, i64 0)
  %b = call i64 @arg(ptr %input, i64 1)
  %c = call i64 @arg(ptr %input, i64 2)
  %wa = zext i64 %a to i128
  %hi = shl i128 %wa, 64
  %wb = zext i64 %b to i128
  %n = or i128 %hi, %wb
  %m = zext i64 %c to i128
  %res = call { i128, i1 } @llvm.umul.with.overflow.i128(i128 %n, i128 %m)
  %v = extractvalue { i128, i1 } %res, 0
  %ov = extractvalue { i128, i1 } %res, 1
  %lo = trunc i128 %v to i64
  %r = select i1 %ov, i64 -1, i64 %lo
  %x = call i64 @finish(i64 %r)
  ret i64 %x
}
