; A u128 return value (two registers).
; upstream: unable to allocate function return|only small returns|aggregate returns
; case: 3 5 0 -> 8
; case: 18446744073709551615 1 0 -> 1
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

define internal i128 @widen_add(i64 %a, i64 %b) noinline {
  %wa = zext i64 %a to i128
  %wb = zext i64 %b to i128
  %s = add i128 %wa, %wb
  ret i128 %s
}

; Returns the high half when the sum carried, else the low half.
define i64 @entrypoint(ptr %input) {
  %a = call i64 @arg(ptr %input, i64 0)
  %b = call i64 @arg(ptr %input, i64 1)
  %s = call i128 @widen_add(i64 %a, i64 %b)
  %hi128 = lshr i128 %s, 64
  %hi = trunc i128 %hi128 to i64
  %lo = trunc i128 %s to i64
  %carried = icmp ne i64 %hi, 0
  %r = select i1 %carried, i64 %hi, i64 %lo
  %x = call i64 @finish(i64 %r)
  ret i64 %x
}
