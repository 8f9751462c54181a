//! PDA verification without `find_program_address`.
//!
//! A PDA is `sha256(seeds ‖ [bump] ‖ program_id ‖ "ProgramDerivedAddress")`
//! when that hash is NOT an ed25519 point; the canonical bump is the highest
//! bump for which it is not. The client passes the bump; we check that the
//! hash with it equals the account's address, and that the hash with every
//! higher bump IS a curve point (so no higher bump gives a PDA).
//!
//! That the given bump's hash is off the curve is not re-checked here: every
//! caller then signs a CPI with exactly these seeds (`CreateAccount`, or
//! `Allocate` + `Assign`), and the runtime derives the signer with
//! `create_program_address`, which refuses an on-curve hash and fails the
//! whole instruction. Checking it here too would cost 159 CU on every call.
//!
//! Cost: `sol_create_program_address` charges 1,500 CU per call. We use
//! `sol_sha256` (85 + max(10, len/2) per seed slice: ~165 CU for the op
//! seeds), plus `sol_curve_validate_point` (159 CU) for each higher bump:
//! ~210 CU when the canonical bump is 255, then ~380 CU per bump below it.
//! The canonical bump is 255 − k with probability ~2^-(k+1): one higher bump
//! on average.

use {
    crate::{
        error::OncepayError,
        keys::{keys_eq, AlignedKey},
    },
    pinocchio::pubkey::{Pubkey, PDA_MARKER},
};

/// Most seeds any of our PDAs has (without the bump).
const MAX_SEEDS: usize = 3;

/// `sha256(seeds ‖ [bump] ‖ program_id ‖ "ProgramDerivedAddress")`.
#[inline(always)]
pub fn hash_address(seeds: &[&[u8]], bump: u8, program_id: &Pubkey) -> AlignedKey {
    let bump_seed = [bump];
    let mut parts: [&[u8]; MAX_SEEDS + 3] = [&[]; MAX_SEEDS + 3];
    let mut n = 0;
    for seed in seeds.iter().take(MAX_SEEDS) {
        parts[n] = seed;
        n += 1;
    }
    parts[n] = &bump_seed;
    parts[n + 1] = program_id;
    parts[n + 2] = PDA_MARKER;
    sha256_parts(&parts[..n + 3])
}

#[cfg(target_os = "solana")]
#[inline(always)]
fn sha256_parts(parts: &[&[u8]]) -> AlignedKey {
    let mut out = AlignedKey([0u8; 32]);
    // SAFETY: `parts` is a live slice of slices (ptr, len pairs, the layout
    // the syscall reads) and `out` is 32 writable bytes. sol_sha256 only
    // fails on bad memory or too many slices, neither possible here.
    unsafe {
        pinocchio::syscalls::sol_sha256(
            parts.as_ptr() as *const u8,
            parts.len() as u64,
            out.0.as_mut_ptr(),
        );
    }
    out
}

#[cfg(not(target_os = "solana"))]
fn sha256_parts(parts: &[&[u8]]) -> AlignedKey {
    // Host mirror (tests): concatenate and hash with the const SHA-256.
    let mut buf = [0u8; 32 * (MAX_SEEDS + 3)];
    let mut len = 0;
    for p in parts {
        buf[len..len + p.len()].copy_from_slice(p);
        len += p.len();
    }
    AlignedKey(crate::discriminator::sha256(&buf[..len]))
}

/// Whether `bytes` is a valid compressed ed25519 point (then it is not a
/// PDA).
#[cfg(target_os = "solana")]
#[inline(always)]
pub fn is_on_curve(bytes: &[u8; 32]) -> bool {
    /// `CURVE25519_EDWARDS` in the curve syscalls.
    const EDWARDS: u64 = 0;
    let mut unused = 0u8;
    // SAFETY: `bytes` is 32 readable bytes; the syscall returns 0 when the
    // point decompresses, 1 when it does not, and reads nothing else.
    unsafe {
        pinocchio::syscalls::sol_curve_validate_point(EDWARDS, bytes.as_ptr(), &mut unused) == 0
    }
}

/// Host builds have no curve arithmetic: host tests cover only the hashing.
#[cfg(not(target_os = "solana"))]
pub fn is_on_curve(_bytes: &[u8; 32]) -> bool {
    false
}

/// Whether `address` is the hash of `seeds` with `bump` (the address part of
/// Anchor's `seeds = [...], bump = b`; that the hash is off the curve is left
/// to the runtime, see the module doc).
#[inline(always)]
pub fn is_address(address: &Pubkey, seeds: &[&[u8]], bump: u8, program_id: &Pubkey) -> bool {
    keys_eq(&hash_address(seeds, bump, program_id).0, address)
}

/// That no bump above `bump` gives a PDA of `seeds` (every higher hash is a
/// curve point), so `bump` is the canonical one, else `NonCanonicalBump`.
#[inline(always)]
pub fn verify_no_higher_bump(
    seeds: &[&[u8]],
    bump: u8,
    program_id: &Pubkey,
) -> Result<(), OncepayError> {
    let mut higher = bump;
    while higher < u8::MAX {
        higher += 1;
        if !is_on_curve(&hash_address(seeds, higher, program_id).0) {
            return Err(OncepayError::NonCanonicalBump);
        }
    }
    Ok(())
}

/// Checks that `address` is the hash of `seeds` with `bump` (else
/// `wrong_address`), and that `bump` is canonical.
#[inline(always)]
pub fn verify_canonical(
    address: &Pubkey,
    seeds: &[&[u8]],
    bump: u8,
    program_id: &Pubkey,
    wrong_address: OncepayError,
) -> Result<(), OncepayError> {
    if !is_address(address, seeds, bump, program_id) {
        return Err(wrong_address);
    }
    verify_no_higher_bump(seeds, bump, program_id)
}

/// Whether `address` is the canonical PDA of `seeds` (what
/// `find_program_address` returns): the hash with the highest bump that is
/// off the curve. Costs a hash and a curve check per bump tried, so it is
/// used only to name a failure, never on the success path.
pub fn is_canonical_address(address: &Pubkey, seeds: &[&[u8]], program_id: &Pubkey) -> bool {
    let mut bump = u8::MAX;
    loop {
        let hash = hash_address(seeds, bump, program_id);
        if !is_on_curve(&hash.0) {
            return keys_eq(&hash.0, address);
        }
        match bump.checked_sub(1) {
            Some(lower) => bump = lower,
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use {super::*, crate::address::PROGRAM_ID};

    #[test]
    fn hash_matches_web3_create_program_address() {
        // PublicKey.findProgramAddressSync([b"op", [7;32], [9;32]], PROGRAM_ID)
        // from @solana/web3.js 1.99 returned bump 254 and this address.
        let expected: Pubkey = [
            54, 194, 131, 178, 188, 157, 114, 157, 231, 126, 31, 126, 41, 18, 53, 158, 5, 213, 221,
            11, 10, 223, 130, 99, 176, 84, 11, 166, 151, 195, 142, 105,
        ];
        let seeds: [&[u8]; 3] = [b"op", &[7; 32], &[9; 32]];
        assert_eq!(hash_address(&seeds, 254, &PROGRAM_ID).0, expected);
        assert_ne!(hash_address(&seeds, 253, &PROGRAM_ID).0, expected);
    }

    #[test]
    fn wrong_address_is_named() {
        let seeds: [&[u8]; 3] = [b"op", &[7; 32], &[9; 32]];
        assert_eq!(
            verify_canonical(
                &[0; 32],
                &seeds,
                254,
                &PROGRAM_ID,
                OncepayError::InvalidOperationAddress
            ),
            Err(OncepayError::InvalidOperationAddress)
        );
    }
}
