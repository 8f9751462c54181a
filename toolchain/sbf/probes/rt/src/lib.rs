//! Minimal runtime for the toolchain probes: the few syscalls they use, the
//! serialized-input parser (accounts are skipped) and a panic handler.
//! Probes stay dependency-free so a probe failure points at the toolchain.
#![no_std]

pub mod syscalls {
    extern "C" {
        pub fn sol_log_(message: *const u8, len: u64);
        pub fn sol_log_64_(a: u64, b: u64, c: u64, d: u64, e: u64);
        pub fn sol_set_return_data(data: *const u8, len: u64);
        pub fn abort() -> !;
    }
}

/// Logs a UTF-8 message through `sol_log_`.
pub fn log(message: &str) {
    // SAFETY: the pointer and length describe a live &str.
    unsafe { syscalls::sol_log_(message.as_ptr(), message.len() as u64) }
}

/// Logs five numbers through `sol_log_64_`.
pub fn log_u64s(a: u64, b: u64, c: u64, d: u64, e: u64) {
    // SAFETY: plain values, no memory is passed.
    unsafe { syscalls::sol_log_64_(a, b, c, d, e) }
}

/// Sets the transaction's return data (read back by the tests).
pub fn set_return_data(data: &[u8]) {
    // SAFETY: the pointer and length describe a live slice.
    unsafe { syscalls::sol_set_return_data(data.as_ptr(), data.len() as u64) }
}

const NON_DUP_MARKER: u8 = u8::MAX;
const MAX_PERMITTED_DATA_INCREASE: usize = 10 * 1024;
const BPF_ALIGN_OF_U128: usize = 8;

unsafe fn read_u64(ptr: *const u8) -> u64 {
    // SAFETY: the caller points inside the runtime's input region.
    unsafe { (ptr as *const u64).read_unaligned() }
}

/// Returns the instruction data from the loader's serialized input (SBF
/// "aligned" layout), skipping every account.
///
/// # Safety
/// `input` must be the pointer the runtime passed to `entrypoint`.
pub unsafe fn instruction_data<'a>(input: *mut u8) -> &'a [u8] {
    // SAFETY: walks the layout documented for the aligned BPF loader.
    unsafe {
        let mut ptr = input as *const u8;
        let accounts = read_u64(ptr);
        ptr = ptr.add(8);
        for _ in 0..accounts {
            let dup = *ptr;
            if dup == NON_DUP_MARKER {
                // marker, signer, writable, executable, 4 padding, key, owner, lamports
                ptr = ptr.add(8 + 32 + 32 + 8);
                let data_len = read_u64(ptr) as usize;
                ptr = ptr.add(8 + data_len + MAX_PERMITTED_DATA_INCREASE);
                ptr = ptr.add(ptr.align_offset(BPF_ALIGN_OF_U128));
                ptr = ptr.add(8); // rent epoch
            } else {
                ptr = ptr.add(8);
            }
        }
        let len = read_u64(ptr) as usize;
        core::slice::from_raw_parts(ptr.add(8), len)
    }
}

/// Reads a little-endian u64 at `at`, zero when the data is too short.
pub fn u64_at(data: &[u8], at: usize) -> u64 {
    match data.get(at..at + 8) {
        Some(bytes) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(bytes);
            u64::from_le_bytes(b)
        }
        None => 0,
    }
}

/// Reads a little-endian u128 at `at`, zero when the data is too short.
pub fn u128_at(data: &[u8], at: usize) -> u128 {
    (u64_at(data, at) as u128) | ((u64_at(data, at + 8) as u128) << 64)
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    log("probe panicked");
    // SAFETY: `abort` is the runtime's terminating syscall.
    unsafe { syscalls::abort() }
}

/// Fixed-size little-endian output buffer, sent back as return data.
pub struct Out {
    buf: [u8; 512],
    len: usize,
}

impl Out {
    pub const fn new() -> Self {
        Out { buf: [0; 512], len: 0 }
    }

    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        let end = self.len + bytes.len();
        self.buf[self.len..end].copy_from_slice(bytes);
        self.len = end;
        self
    }

    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.bytes(&[v])
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }

    pub fn u128(&mut self, v: u128) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }

    pub fn finish(&self) {
        set_return_data(&self.buf[..self.len]);
    }
}

impl Default for Out {
    fn default() -> Self {
        Self::new()
    }
}

/// Fixed-size text buffer for `core::fmt::Write` (no allocator in the
/// probes); writing past its 256 bytes fails with `fmt::Error`.
pub struct StackBuf {
    buf: [u8; 256],
    len: usize,
}

impl StackBuf {
    pub const fn new() -> Self {
        StackBuf { buf: [0; 256], len: 0 }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Default for StackBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(core::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
