//! Probe: core::fmt into a fixed stack buffer (trait objects, integer and
//! u128 formatting, padding, hex, Debug escaping), logged and returned.
#![no_std]

use core::fmt::Write;
use probe_rt::{instruction_data, log, set_return_data, u64_at, StackBuf};

/// Input: a: u64, b: u64 (LE). Output: the formatted line as return data,
/// also logged with sol_log_.
#[no_mangle]
pub unsafe extern "C" fn entrypoint(input: *mut u8) -> u64 {
    // SAFETY: `input` is the runtime's serialized input.
    let data = unsafe { instruction_data(input) };
    let a = u64_at(data, 0);
    let b = u64_at(data, 8);
    let mut w = StackBuf::new();
    let r = write!(
        w,
        "sum={} neg={} hex={:#x} wide={} pad=[{:>6}] dbg={:?}",
        a.wrapping_add(b),
        -(a as i64),
        a,
        (a as u128) * (b as u128) * 1000,
        b % 1000,
        "tab\tq\""
    );
    if r.is_err() {
        log("fmt: buffer too small");
        return 1;
    }
    // SAFETY: only &str pieces were written.
    log(unsafe { core::str::from_utf8_unchecked(w.as_bytes()) });
    set_return_data(w.as_bytes());
    0
}
