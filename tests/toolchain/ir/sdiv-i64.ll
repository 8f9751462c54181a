; Signed division (SBPF v0 only divides unsigned).
; upstream: unsupported signed division
; case: -7 2 0 -> -3
; case: 7 -2 0 -> -3
; case: -9 -4 0 -> 2
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
  %q = sdiv i64 %a, %b
  %x = call i64 @finish(i64 %q)
  ret i64 %x
}
