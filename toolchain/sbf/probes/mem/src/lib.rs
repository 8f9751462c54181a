//! Probe: large memcpy / memset / memmove / memcmp (>= 1 KiB), which the pass
//! turns into the sol_mem*_ syscalls, plus a byte-loop copy to compare CU.
#![no_std]

use core::{cmp::Ordering, hint::black_box};
use probe_rt::{instruction_data, u64_at, Out};

const N: usize = 1024;

fn ordering_byte(o: Ordering) -> u8 {
    match o {
        Ordering::Less => 0,
        Ordering::Equal => 1,
        Ordering::Greater => 2,
    }
}

/// What the pass avoids: one load and one store per byte.
#[inline(never)]
fn byte_loop_copy(dst: &mut [u8; N], src: &[u8; N]) {
    for i in 0..N {
        // SAFETY: i < N for both arrays; volatile keeps LLVM from turning
        // the loop back into a memcpy.
        unsafe { core::ptr::write_volatile(&mut dst[i], core::ptr::read_volatile(&src[i])) }
    }
}

fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().enumerate().fold(0u64, |acc, (i, b)| acc.wrapping_add((i as u64 + 1) * *b as u64))
}

/// Input: mode u8, seed u8, len u64 (at offset 2; dynamic length for a
/// memmove). Mode 0: the full check, output (LE): checksum after memset +
/// memcpy, checksum after an overlapping memmove of `len` bytes, a == b
/// (u8), a.cmp(b) (0 less, 1 equal, 2 greater) after changing one byte,
/// the 1 KiB prefix compare of two equal buffers (u8).
/// Modes 1/2/3 (CU measurement): memcpy of 1 KiB / byte-loop copy / nothing.
#[no_mangle]
pub unsafe extern "C" fn entrypoint(input: *mut u8) -> u64 {
    // SAFETY: `input` is the runtime's serialized input.
    let data = unsafe { instruction_data(input) };
    let mode = data.first().copied().unwrap_or(0);
    let seed = black_box(data.get(1).copied().unwrap_or(0));
    let len = black_box(u64_at(data, 2) as usize).min(N - 64);
    let mut out = Out::new();

    let mut a = [0u8; N];
    let mut b = [0u8; N];
    a.fill(black_box(seed)); // memset
    match mode {
        1 => b.copy_from_slice(black_box(&a)), // memcpy
        2 => byte_loop_copy(&mut b, black_box(&a)),
        3 => {}
        _ => {
            for (i, x) in a.iter_mut().enumerate().step_by(97) {
                *x = x.wrapping_add(i as u8);
            }
            b.copy_from_slice(black_box(&a)); // memcpy
            out.u64(checksum(&b));
            b.copy_within(0..len, 64); // memmove, overlapping
            out.u64(checksum(&b));
            a.copy_within(0..len, 64);
            out.u8((black_box(&a)[..] == black_box(&b)[..]) as u8); // bcmp
            b[N - 1] = b[N - 1].wrapping_add(1);
            out.u8(ordering_byte(black_box(&a)[..].cmp(&black_box(&b)[..]))); // memcmp
            out.u8((a[..N - 1] == b[..N - 1]) as u8);
        }
    }
    out.u8(black_box(&b)[seed as usize]);
    out.finish();
    0
}
