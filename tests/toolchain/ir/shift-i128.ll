; u128 shifts by a run-time amount written directly (not from a division):
; low 64 bits of (((a << 64) | b) << c) ^ (((a << 64) | b) >> c).
; upstream: __ashlti3|__lshrti3
; case: 1 0 0 -> 0
; case: 1 0 4 -> 1152921504606846976
; case: 0 1 64 -> 0
; case: 3 0 127 -> 0
; case: 5 6 65 -> 2
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

define i64 @entrypoint(ptr %input) {
  %a = call i64 @arg(ptr %input, i64 0)
  %b = call i64 @arg(ptr %input, i64 1)
  %c = call i64 @arg(ptr %input, i64 2)
  %wa = zext i64 %a to i128
  %hi = shl i128 %wa, 64
  %wb = zext i64 %b to i128
  %x = or i128 %hi, %wb
  %s = zext i64 %c to i128
  %l = shl i128 %x, %s
  %rr = lshr i128 %x, %s
  %y = xor i128 %l, %rr
  %r = trunc i128 %y to i64
  %out = call i64 @finish(i64 %r)
  ret i64 %out
}
