//! Probe: integer arithmetic SBPF v0 has no instruction for: signed
//! division/remainder, u128/i128 multiply and division, and the overflow
//! checks behind checked_mul / checked_add on u64, i64 and u128.
#![no_std]

use core::hint::black_box;
use probe_rt::{instruction_data, u128_at, u64_at, Out};

fn flag<T: Copy + Default>(r: Option<T>) -> (u8, T) {
    match r {
        Some(v) => (1, v),
        None => (0, T::default()),
    }
}

/// Input: x: i64, y: i64, p: u128, q: u128, m: u64, n: u64 (LE, 64 bytes).
/// Output (LE): x/y, x%y (i64); (x as i32)/(y as i32), (x as i32)%(y as i32)
/// (as i64); p+q, p*q, p/q, p%q (u128, wrapping); (x as i128)*(p as i128)/(y
/// as i128) (i128); m*n as u128; then (flag u8, value) for p.checked_mul(q),
/// p.checked_add(q), m.checked_mul(n), m.checked_add(n), x.checked_mul(y),
/// (p as i128).checked_mul(q as i128).
#[no_mangle]
pub unsafe extern "C" fn entrypoint(input: *mut u8) -> u64 {
    // SAFETY: `input` is the runtime's serialized input.
    let data = unsafe { instruction_data(input) };
    let x = black_box(u64_at(data, 0) as i64);
    let y = black_box(u64_at(data, 8) as i64);
    let p = black_box(u128_at(data, 16));
    let q = black_box(u128_at(data, 32));
    let m = black_box(u64_at(data, 48));
    let n = black_box(u64_at(data, 56));
    let mut out = Out::new();

    out.u64((x / y) as u64).u64((x % y) as u64);
    let (x32, y32) = (x as i32, y as i32);
    out.u64((x32 / y32) as i64 as u64).u64((x32 % y32) as i64 as u64);
    out.u128(p.wrapping_add(q)).u128(p.wrapping_mul(q)).u128(p / q).u128(p % q);
    out.u128(((x as i128).wrapping_mul(p as i128) / (y as i128)) as u128);
    out.u128(m as u128 * n as u128);

    let (f, v) = flag(p.checked_mul(q));
    out.u8(f).u128(v);
    let (f, v) = flag(p.checked_add(q));
    out.u8(f).u128(v);
    let (f, v) = flag(m.checked_mul(n));
    out.u8(f).u64(v);
    let (f, v) = flag(m.checked_add(n));
    out.u8(f).u64(v);
    let (f, v) = flag(x.checked_mul(y));
    out.u8(f).u64(v as u64);
    let (f, v) = flag((p as i128).checked_mul(q as i128));
    out.u8(f).u128(v as u128);
    out.finish();
    0
}
