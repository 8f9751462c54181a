; An aggregate (tuple-like) return value.
; upstream: aggregate returns|only small returns
; case: 17 5 0 -> 3002
; case: 1000 7 0 -> 142006
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

define internal { i64, i64 } @divmod(i64 %a, i64 %b) noinline {
  %q = udiv i64 %a, %b
  %r = urem i64 %a, %b
  %p1 = insertvalue { i64, i64 } poison, i64 %q, 0
  %p2 = insertvalue { i64, i64 } %p1, i64 %r, 1
  ret { i64, i64 } %p2
}

define i64 @entrypoint(ptr %input) {
  %a = call i64 @arg(ptr %input, i64 0)
  %b = call i64 @arg(ptr %input, i64 1)
  %qr = call { i64, i64 } @divmod(i64 %a, i64 %b)
  %q = extractvalue { i64, i64 } %qr, 0
  %r = extractvalue { i64, i64 } %qr, 1
  %q1000 = mul i64 %q, 1000
  %s = add i64 %q1000, %r
  %x = call i64 @finish(i64 %s)
  ret i64 %x
}
