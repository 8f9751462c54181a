//! Smallest probe: logs a line, tells which `target_os` it was compiled for
//! (crates such as pinocchio pick the syscalls on `target_os = "solana"`) and
//! returns its instruction data reversed.
#![no_std]

use probe_rt::{instruction_data, log, set_return_data};

#[no_mangle]
pub unsafe extern "C" fn entrypoint(input: *mut u8) -> u64 {
    // SAFETY: `input` is the runtime's serialized input.
    let data = unsafe { instruction_data(input) };
    log("hello from the oncepay toolchain");
    if cfg!(target_os = "solana") {
        log("target_os = solana");
    } else {
        log("target_os is not solana");
    }
    let mut out = [0u8; 32];
    let n = data.len().min(out.len());
    for i in 0..n {
        out[i] = data[n - 1 - i];
    }
    set_return_data(&out[..n]);
    0
}
