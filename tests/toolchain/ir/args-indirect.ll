; More than 5 argument registers through a function pointer (table in rodata).
; upstream: too many arguments|stack arguments
; case: 2 3 4 -> 18
; case: 3 3 4 -> 19
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

@table = internal constant [2 x ptr] [ptr @sum6, ptr @first_plus_last6]

define internal i64 @sum6(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f) noinline {
  %s1 = add i64 %a, %b
  %s2 = add i64 %s1, %c
  %s3 = add i64 %s2, %d
  %s4 = add i64 %s3, %e
  %s5 = add i64 %s4, %f
  ret i64 %s5
}

define internal i64 @first_plus_last6(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f) noinline {
  %m = mul i64 %f, 4
  %s = add i64 %a, %m
  ret i64 %s
}

define i64 @entrypoint(ptr %input) {
  %a = call i64 @arg(ptr %input, i64 0)
  %b = call i64 @arg(ptr %input, i64 1)
  %c = call i64 @arg(ptr %input, i64 2)
  %i = and i64 %a, 1
  %slot = getelementptr [2 x ptr], ptr @table, i64 0, i64 %i
  %fp = load ptr, ptr %slot
  %r = call i64 %fp(i64 %a, i64 %b, i64 %c, i64 %a, i64 %b, i64 %c)
  %x = call i64 @finish(i64 %r)
  ret i64 %x
}
