//! Cheap 32-byte key comparison.
//!
//! The upstream BPF backend splits every unaligned u64 load into 8 byte
//! loads, so `==` on `[u8; 32]` (or pinocchio's `pubkey_eq`, built on
//! `read_unaligned`) costs ~100 instructions. Keys the runtime hands us
//! (account keys, owners, token-account fields at offsets 0/32/64 of account
//! data) sit 8-byte aligned in the input buffer, and our constants are
//! `AlignedKey` statics, so four aligned u64 loads do; anything unaligned
//! goes through the `sol_memcmp_` syscall.

use pinocchio::{account_info::AccountInfo, pubkey::Pubkey};

/// A key constant stored 8-byte aligned.
#[repr(C, align(8))]
pub struct AlignedKey(pub Pubkey);

/// `a == b`, with aligned u64 loads when both are 8-byte aligned.
#[inline(always)]
pub fn keys_eq(a: &Pubkey, b: &Pubkey) -> bool {
    let (pa, pb) = (a.as_ptr() as *const u64, b.as_ptr() as *const u64);
    if (pa as usize | pb as usize) & 7 == 0 {
        // SAFETY: both point to 32 readable bytes (a `[u8; 32]`), and both
        // are 8-byte aligned (checked above), so four u64 reads are in bounds
        // and aligned.
        //
        // One OR of XORs, not a chain of `==`: LLVM's MergeICmps turns such a
        // chain back into a 32-byte `memcmp` call, which costs ~300 CU more
        // when the toolchain links compiler_builtins' byte loop for it.
        unsafe {
            ((*pa ^ *pb)
                | (*pa.add(1) ^ *pb.add(1))
                | (*pa.add(2) ^ *pb.add(2))
                | (*pa.add(3) ^ *pb.add(3)))
                == 0
        }
    } else {
        unaligned_eq(a, b)
    }
}

/// `a == b` through the `sol_memcmp_` syscall (~10 CU): `==` on `[u8; 32]`
/// becomes a `memcmp` call, which some toolchains link as a byte loop
/// (~300 CU). The program id the runtime passes sits unaligned after the
/// instruction data, so every owner check against it comes here.
#[cfg(target_os = "solana")]
#[inline(always)]
fn unaligned_eq(a: &Pubkey, b: &Pubkey) -> bool {
    let mut result = 0i32;
    // SAFETY: both point to 32 readable bytes; the syscall reads exactly
    // `n` = 32 bytes of each and writes one i32 to `result`.
    unsafe {
        pinocchio::syscalls::sol_memcmp_(a.as_ptr(), b.as_ptr(), 32, &mut result as *mut i32);
    }
    result == 0
}

#[cfg(not(target_os = "solana"))]
fn unaligned_eq(a: &Pubkey, b: &Pubkey) -> bool {
    a == b
}

/// `account.owner() == owner`, cheaply.
#[inline(always)]
pub fn owned_by(account: &AccountInfo, owner: &Pubkey) -> bool {
    keys_eq(account.owner(), owner)
}

/// Little-endian u64 from 8 bytes, with one aligned load when possible.
#[inline(always)]
pub fn read_u64(bytes: &[u8; 8]) -> u64 {
    let p = bytes.as_ptr();
    if (p as usize) & 7 == 0 {
        // SAFETY: 8 readable bytes, 8-byte aligned (checked); SBF is little
        // endian like the encoding.
        u64::from_le(unsafe { *(p as *const u64) })
    } else {
        u64::from_le_bytes(*bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_aligned_and_unaligned_keys() {
        let a = AlignedKey([7; 32]);
        let b = AlignedKey([7; 32]);
        let mut c = AlignedKey([7; 32]);
        assert!(keys_eq(&a.0, &b.0));
        c.0[31] = 8;
        assert!(!keys_eq(&a.0, &c.0));
        let buf = [7u8; 40];
        let unaligned: &Pubkey = buf[1..33].try_into().unwrap();
        assert!(keys_eq(unaligned, &a.0));
        assert_eq!(read_u64(&[1, 0, 0, 0, 0, 0, 0, 1]), 0x0100_0000_0000_0001);
    }
}
