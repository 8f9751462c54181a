//! The op PDA's address proof, whose bump the client passes: the twin's
//! proof, without `create_program_address` or `find_program_address`.
//!
//! A PDA is `sha256(seeds ‖ [bump] ‖ program_id ‖ "ProgramDerivedAddress")`
//! when that hash is NOT an ed25519 point; the canonical bump is the highest
//! bump for which it is not.
//!
//! - [`is_address`]: the account's key is that hash for the client's bump
//!   (one `sol_sha256`, ~200 CU). Anchor's `seeds = [...], bump = op_bump`
//!   would check the same with `create_program_address` (1,500 CU).
//! - That the hash is off the curve is left to the runtime, as in the twin:
//!   the instruction then signs the op account's creation with exactly these
//!   seeds, and the runtime derives that signer with
//!   `create_program_address`, which refuses an on-curve hash and fails the
//!   whole instruction before anything is created or moved. (An account at an
//!   on-curve hash that this program owns or that holds data would need the
//!   private key of a SHA-256 output.)
//! - [`verify_no_higher_bump`]: `op_bump` is canonical when every higher bump
//!   hashes ONTO the curve: one `sol_sha256` + one `sol_curve_validate_point`
//!   (~380 CU) per higher bump, nothing at bump 255 (half of all op ids). A
//!   lower valid bump would be a second address for the same op_id, which
//!   would pay a second time. Anchor's bare `bump` would find the canonical
//!   bump with `find_program_address`, at 1,500 CU per bump tried.

use {crate::error::OncepayError, anchor_lang::prelude::*};

/// `"ProgramDerivedAddress"`, the suffix of every PDA preimage.
const PDA_MARKER: &[u8] = b"ProgramDerivedAddress";
/// Most seeds any of our PDAs has, bump excluded.
const MAX_SEEDS: usize = 3;

/// `sha256(seeds ‖ [bump] ‖ program_id ‖ "ProgramDerivedAddress")`.
pub fn hash_address(seeds: &[&[u8]], bump: u8, program_id: &Pubkey) -> Pubkey {
    let bump_seed = [bump];
    let mut parts: [&[u8]; MAX_SEEDS + 3] = [&[]; MAX_SEEDS + 3];
    let mut n = 0;
    for seed in seeds.iter().take(MAX_SEEDS) {
        parts[n] = seed;
        n += 1;
    }
    parts[n] = &bump_seed;
    parts[n + 1] = program_id.as_ref();
    parts[n + 2] = PDA_MARKER;
    Pubkey::new_from_array(solana_sha256_hasher::hashv(&parts[..n + 3]).to_bytes())
}

/// Whether `key` is a valid compressed ed25519 point (then it is no PDA).
#[cfg(target_os = "solana")]
pub fn is_on_curve(key: &Pubkey) -> bool {
    /// `CURVE25519_EDWARDS` in the curve syscalls.
    const EDWARDS: u64 = 0;
    let mut unused = 0u8;
    // SAFETY: `key` is 32 readable bytes; the syscall returns 0 when the point
    // decompresses, 1 when it does not, and writes nothing else.
    unsafe {
        solana_define_syscall::definitions::sol_curve_validate_point(
            EDWARDS,
            key.as_ref().as_ptr(),
            &mut unused,
        ) == 0
    }
}

/// Host builds (unit tests, IDL build) decompress with curve25519-dalek.
#[cfg(not(target_os = "solana"))]
pub fn is_on_curve(key: &Pubkey) -> bool {
    key.is_on_curve()
}

/// Whether `key` is the hash of `seeds` with `bump` (see the module doc for
/// the off-curve part).
pub fn is_address(key: &Pubkey, seeds: &[&[u8]], bump: u8, program_id: &Pubkey) -> bool {
    hash_address(seeds, bump, program_id) == *key
}

/// Given that `seeds` with `bump` is the account's address ([`is_address`]),
/// proves that no higher bump is a PDA, else `NonCanonicalBump`.
pub fn verify_no_higher_bump(seeds: &[&[u8]], bump: u8, program_id: &Pubkey) -> Result<()> {
    // `b < 255`, so `b + 1` does not overflow.
    for higher in (bump..u8::MAX).map(|b| b + 1) {
        require!(
            is_on_curve(&hash_address(seeds, higher, program_id)),
            OncepayError::NonCanonicalBump
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds<'a>(merchant: &'a [u8; 32], op_id: &'a [u8; 32]) -> [&'a [u8]; 3] {
        [b"op", merchant, op_id]
    }

    #[test]
    fn hash_is_create_program_address() {
        let (m, op) = ([7u8; 32], [9u8; 32]);
        let (pda, bump) = Pubkey::find_program_address(&seeds(&m, &op), &crate::ID);
        assert_eq!(hash_address(&seeds(&m, &op), bump, &crate::ID), pda);
    }

    #[test]
    fn is_address_accepts_the_pda_and_refuses_another_bump_or_seed() {
        let (m, op) = ([7u8; 32], [9u8; 32]);
        let (pda, bump) = Pubkey::find_program_address(&seeds(&m, &op), &crate::ID);
        assert!(is_address(&pda, &seeds(&m, &op), bump, &crate::ID));
        assert!(!is_address(
            &pda,
            &seeds(&m, &op),
            bump.wrapping_sub(1),
            &crate::ID
        ));
        assert!(!is_address(&pda, &seeds(&m, &[8u8; 32]), bump, &crate::ID));
        assert!(!is_address(&pda, &seeds(&m, &op), bump, &Pubkey::default()));
    }

    #[test]
    fn accepts_the_canonical_bump_and_refuses_lower_valid_ones() {
        let mut refused = 0;
        for i in 0..64u8 {
            let (m, op) = ([i; 32], [i.wrapping_mul(3); 32]);
            let s = seeds(&m, &op);
            let (_, bump) = Pubkey::find_program_address(&s, &crate::ID);
            assert!(
                verify_no_higher_bump(&s, bump, &crate::ID).is_ok(),
                "bump {bump}"
            );
            let lower = (0..bump).rev().find(|b| {
                Pubkey::create_program_address(&[s[0], s[1], s[2], &[*b]], &crate::ID).is_ok()
            });
            if let Some(lower) = lower {
                assert_eq!(
                    verify_no_higher_bump(&s, lower, &crate::ID),
                    Err(OncepayError::NonCanonicalBump.into())
                );
                refused += 1;
            }
        }
        assert!(refused > 60);
    }
}
