; llvm.trap (core::intrinsics::abort, e.g. Rc's overflow check) and
; llvm.ubsantrap: the program must end through the runtime's abort syscall.
; Upstream llc calls a weak `__bpf_trap` that no SBF loader defines.
; upstream: UNDEFINED_SYMBOL.*__bpf_trap
; syscalls: abort
; case: 5 1 0 -> 15
; case: 7 2 0 -> 21
; aborts: 0 1 0
; aborts: 5 0 0
target datalayout = "e-m:e-p:64:64-i64:64-i128:128-n32:64-S128"
target triple = "bpfel"

declare void @sol_set_return_data(ptr, i64)
declare void @llvm.trap()
declare void @llvm.ubsantrap(i8)

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

; a == 0 traps; b == 0 traps through ubsantrap; else returns a * 3.
define i64 @entrypoint(ptr %input) {
entry:
  %a = call i64 @arg(ptr %input, i64 0)
  %b = call i64 @arg(ptr %input, i64 1)
  %za = icmp eq i64 %a, 0
  br i1 %za, label %trap, label %checkb
checkb:
  %zb = icmp eq i64 %b, 0
  br i1 %zb, label %ubsan, label %ok
trap:
  call void @llvm.trap()
  unreachable
ubsan:
  call void @llvm.ubsantrap(i8 3)
  unreachable
ok:
  %r = mul i64 %a, 3
  %x = call i64 @finish(i64 %r)
  ret i64 %x
}
