; More than 5 argument registers on a direct call.
; upstream: too many arguments|stack arguments
; case: 1 2 3 -> 53
; case: 100 10 1 -> 1279
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

define internal i64 @weigh(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, i64 %g) noinline {
  %b2 = mul i64 %b, 2
  %c3 = mul i64 %c, 3
  %d4 = mul i64 %d, 4
  %e5 = mul i64 %e, 5
  %f6 = mul i64 %f, 6
  %g7 = mul i64 %g, 7
  %s1 = add i64 %a, %b2
  %s2 = add i64 %s1, %c3
  %s3 = add i64 %s2, %d4
  %s4 = add i64 %s3, %e5
  %s5 = add i64 %s4, %f6
  %s6 = add i64 %s5, %g7
  ret i64 %s6
}

define i64 @entrypoint(ptr %input) {
  %a = call i64 @arg(ptr %input, i64 0)
  %b = call i64 @arg(ptr %input, i64 1)
  %c = call i64 @arg(ptr %input, i64 2)
  %r = call i64 @weigh(i64 %a, i64 %b, i64 %c, i64 %a, i64 %b, i64 %c, i64 %a)
  %x = call i64 @finish(i64 %r)
  ret i64 %x
}
