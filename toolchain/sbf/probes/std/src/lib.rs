//! The std probe: Vec, String, `format!`, BTreeMap, HashMap and `Box<dyn
//! Trait>` from the patched std (toolchain/sbf/std), plus each way a program
//! ends early (a formatted panic, an index out of bounds, `panic_any`, an
//! allocation past the heap). Instruction data: mode (u8), n (u64), seed (u64).
//! Mode 0 returns a summary line (also logged) that the tests recompute.
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

extern "C" {
    fn sol_log_(message: *const u8, len: u64);
    fn sol_set_return_data(data: *const u8, len: u64);
}

fn log(message: &str) {
    // SAFETY: the pointer and length describe a live &str.
    unsafe { sol_log_(message.as_ptr(), message.len() as u64) }
}

/// std calls this on a panic (as with Solana's own toolchain, where
/// solana-program's `entrypoint!` macro defines it).
#[no_mangle]
pub fn custom_panic(info: &core::panic::PanicInfo<'_>) {
    log(&info.to_string());
}

trait Shape {
    fn area(&self) -> u64;
    fn name(&self) -> String;
}

struct Square(u64);
struct Rect(u64, u64);

impl Shape for Square {
    fn area(&self) -> u64 {
        self.0 * self.0
    }
    fn name(&self) -> String {
        format!("square{}", self.0)
    }
}

impl Shape for Rect {
    fn area(&self) -> u64 {
        self.0 * self.1
    }
    fn name(&self) -> String {
        format!("rect{}x{}", self.0, self.1)
    }
}

fn summary(n: u64, seed: u64) -> String {
    // Vec: n pseudo-random values below 1000, sorted.
    let mut values: Vec<u64> = (1..=n).map(|i| seed.wrapping_mul(i).wrapping_add(i * i) % 1000).collect();
    values.sort_unstable();
    // BTreeMap: how many values per remainder mod 7, in key order.
    let mut by_rem: BTreeMap<u64, u32> = BTreeMap::new();
    for v in &values {
        *by_rem.entry(v % 7).or_insert(0) += 1;
    }
    let mut counts = String::new();
    for (k, c) in &by_rem {
        let _ = write!(counts, "{k}:{c},");
    }
    counts.pop();
    // HashMap with String keys: sums per "k<value mod 5>", read back sorted.
    let mut sums: HashMap<String, u64> = HashMap::new();
    for v in &values {
        *sums.entry(format!("k{}", v % 5)).or_default() += v;
    }
    let mut keys: Vec<&String> = sums.keys().collect();
    keys.sort();
    let hashed: Vec<String> = keys.iter().map(|k| format!("{k}={}", sums[*k])).collect();
    // Box<dyn Trait>: dynamic dispatch over two shapes per value.
    let shapes: Vec<Box<dyn Shape>> = values
        .iter()
        .take(3)
        .flat_map(|&v| [Box::new(Square(v % 10)) as Box<dyn Shape>, Box::new(Rect(v % 10, 3))])
        .collect();
    let area: u64 = shapes.iter().map(|s| s.area()).sum();
    let names: Vec<String> = shapes.iter().map(|s| s.name()).collect();
    // String: reversed, upper-cased hex of the seed.
    let text: String = format!("{seed:x}").chars().rev().collect::<String>().to_uppercase();
    format!(
        "sorted={values:?} counts={counts} sums={} area={area} shapes={} text={text}",
        hashed.join(","),
        names.join("+"),
    )
}

fn u64_at(data: &[u8], at: usize) -> u64 {
    data.get(at..at + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
}

/// Instruction data of an instruction without accounts: the input starts with
/// the account count (0) and then the data length.
///
/// # Safety
/// `input` must be the pointer the runtime passed to `entrypoint`.
#[no_mangle]
pub unsafe extern "C" fn entrypoint(input: *mut u8) -> u64 {
    // SAFETY: no accounts: u64 count, u64 length, then the data.
    let data = unsafe {
        let len = (input.add(8) as *const u64).read_unaligned() as usize;
        core::slice::from_raw_parts(input.add(16), len)
    };
    let mode = data.first().copied().unwrap_or(0);
    let n = u64_at(data, 1);
    let seed = u64_at(data, 9);
    match mode {
        0 => {
            let line = summary(n, seed);
            log(&line);
            // SAFETY: the pointer and length describe a live String.
            unsafe { sol_set_return_data(line.as_ptr(), line.len() as u64) };
            0
        }
        1 => panic!("probe-std refuses seed {seed} (n = {n})"),
        2 => {
            let v: Vec<u64> = (0..n).collect();
            v[seed as usize] as u64
        }
        3 => std::panic::panic_any(format!("panic_any with seed {seed}")),
        _ => {
            // Past the 32 KiB heap: the allocator returns null.
            let big: Vec<u8> = vec![7u8; (n as usize).max(1) * 1024];
            big[big.len() - 1] as u64
        }
    }
}
