//! Probe: f64/f32 arithmetic, comparisons, `as` conversions (saturating, NaN
//! -> 0) and float formatting, all through compiler_builtins' soft-float
//! functions (BPF has no FPU).
#![no_std]

use core::{fmt::Write, hint::black_box};
use probe_rt::{instruction_data, set_return_data, u64_at, StackBuf};

/// Input: a: u64, b: u64, c: f64 bits. Output: a text line with
/// (a / b) * 1.5 + 0.25 as f64 and as u64, c as i64 / u64 / u8 (saturating),
/// a < c, c == c (false for NaN), (a as f32) as f64, and c with {:.3}.
#[no_mangle]
pub unsafe extern "C" fn entrypoint(input: *mut u8) -> u64 {
    // SAFETY: `input` is the runtime's serialized input.
    let data = unsafe { instruction_data(input) };
    let a = black_box(u64_at(data, 0));
    let b = black_box(u64_at(data, 8));
    let c = black_box(f64::from_bits(u64_at(data, 16)));
    let x = (a as f64 / b as f64) * 1.5 + 0.25;
    let mut w = StackBuf::new();
    let r = write!(
        w,
        "x={} xu={} ci={} cu={} c8={} lt={} eq={} f32={} c3={:.3}",
        x,
        x as u64,
        c as i64,
        c as u64,
        c as u8,
        (a as f64) < c,
        c == black_box(c),
        (a as f32) as f64,
        c
    );
    if r.is_err() {
        return 1;
    }
    set_return_data(w.as_bytes());
    0
}
