//! Probe: calling conventions the BPF backend refuses without the pass:
//! more than 5 argument registers (direct calls, function pointers, i128
//! arguments counting twice), tuple / Result / u128 returns, dyn trait calls
//! and an atomic read-modify-write.
#![no_std]

use core::{
    hint::black_box,
    sync::atomic::{AtomicU64, Ordering},
};
use probe_rt::{instruction_data, u64_at, Out};

#[inline(never)]
fn weigh7(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64, g: u64) -> u64 {
    a.wrapping_add(b.wrapping_mul(2))
        .wrapping_add(c.wrapping_mul(3))
        .wrapping_add(d.wrapping_mul(4))
        .wrapping_add(e.wrapping_mul(5))
        .wrapping_add(f.wrapping_mul(6))
        .wrapping_add(g.wrapping_mul(7))
}

#[inline(never)]
fn xor7(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64, g: u64) -> u64 {
    a ^ b.rotate_left(1) ^ c.rotate_left(2) ^ d.rotate_left(3) ^ e.rotate_left(4) ^ f.rotate_left(5) ^ g.rotate_left(6)
}

// Six registers with only four parameters: two are u128.
#[inline(never)]
fn wide(a: u128, b: u64, c: u128, d: u64) -> u128 {
    a.wrapping_add(c).wrapping_add((b as u128) << 64).wrapping_add(d as u128)
}

#[inline(never)]
fn divmod(a: u64, b: u64) -> (u64, u64) {
    if b == 0 {
        (u64::MAX, a)
    } else {
        (a / b, a % b)
    }
}

#[inline(never)]
fn checked_sub(a: u64, b: u64) -> Result<u64, u32> {
    a.checked_sub(b).ok_or(7)
}

trait Shape {
    fn area(&self) -> u64;
    fn weighted(&self, a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64;
}

struct Rect(u64, u64);
struct Square(u64);

impl Shape for Rect {
    fn area(&self) -> u64 {
        self.0.wrapping_mul(self.1)
    }
    fn weighted(&self, a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64 {
        self.area().wrapping_add(a + b + c + d + e + f)
    }
}

impl Shape for Square {
    fn area(&self) -> u64 {
        self.0.wrapping_mul(self.0)
    }
    fn weighted(&self, a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64 {
        self.area().wrapping_add(a ^ b ^ c ^ d ^ e ^ f)
    }
}

type Fn7 = fn(u64, u64, u64, u64, u64, u64, u64) -> u64;

/// Input: 8 little-endian u64 `v[0..8]`. Output (return data, u64 LE unless
/// noted): weigh7(v0..v6), fnptr[v7 & 1](v0..v6), wide(..) as u128,
/// divmod(v0, v1).0, .1, checked_sub(v0, v1) as tag u8 + u64,
/// dyn shape[v7 & 1].area(), .weighted(v1..v6), atomic fetch_add result.
#[no_mangle]
pub unsafe extern "C" fn entrypoint(input: *mut u8) -> u64 {
    // SAFETY: `input` is the runtime's serialized input.
    let data = unsafe { instruction_data(input) };
    let v: [u64; 8] = core::array::from_fn(|i| black_box(u64_at(data, i * 8)));
    let mut out = Out::new();

    out.u64(weigh7(v[0], v[1], v[2], v[3], v[4], v[5], v[6]));
    let table: [Fn7; 2] = black_box([weigh7, xor7]);
    let f = table[(v[7] & 1) as usize];
    out.u64(f(v[0], v[1], v[2], v[3], v[4], v[5], v[6]));
    out.u128(wide((v[0] as u128) << 64 | v[1] as u128, v[2], v[3] as u128, v[4]));
    let (q, r) = divmod(v[0], v[1]);
    out.u64(q).u64(r);
    match checked_sub(v[0], v[1]) {
        Ok(x) => out.u8(0).u64(x),
        Err(e) => out.u8(1).u64(e as u64),
    };
    let rect = Rect(v[2], v[3]);
    let square = Square(v[4]);
    let shapes: [&dyn Shape; 2] = [&rect, &square];
    let shape = black_box(shapes[(v[7] & 1) as usize]);
    out.u64(shape.area());
    out.u64(shape.weighted(v[1], v[2], v[3], v[4], v[5], v[6]));
    let counter = AtomicU64::new(v[5]);
    let before = black_box(&counter).fetch_add(v[6], Ordering::SeqCst);
    out.u64(before.wrapping_add(counter.load(Ordering::SeqCst)));
    out.finish();
    0
}
