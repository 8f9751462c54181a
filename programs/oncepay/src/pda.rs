//! Canonical-bump proof for a PDA whose bump the client passes, without
//! `find_program_address`.
//!
//! A PDA is `sha256(seeds ‖ [bump] ‖ program_id ‖ "ProgramDerivedAddress")`
//! when that hash is not an ed25519 point; the canonical bump is the highest
//! bump for which it is not. We check that the hash with the given bump is
//! the account's address, and that the hash with every higher bump IS a curve
//! point (so no higher bump gives a PDA).
//!
//! Why not Anchor's `seeds = [...], bump = op_bump`: that constraint calls
//! `create_program_address` (1,500 CU a call) and proves the address, not
//! that the bump is canonical; `bump` alone calls `find_program_address`,
//! 1,500 CU per bump tried. Here: one `sol_sha256` (~165 CU) at bump 255,
//! then ~380 CU per higher bump.
//!
//! That the given bump's hash is off the curve is not re-checked: the
//! instruction then signs `CreateAccount` (or `Allocate` + `Assign`) with
//! exactly these seeds, and the runtime derives that signer with
//! `create_program_address`, which refuses an on-curve hash and fails the
//! whole instruction.

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

/// Checks that `address` is the hash of `seeds` with `bump` (else
/// `wrong_address`) and that no higher bump gives a PDA (else
/// `NonCanonicalBump`).
pub fn verify_canonical(
    address: &Pubkey,
    seeds: &[&[u8]],
    bump: u8,
    program_id: &Pubkey,
    wrong_address: OncepayError,
) -> Result<()> {
    if hash_address(seeds, bump, program_id) != *address {
        return Err(error!(wrong_address));
    }
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
    fn accepts_exactly_the_canonical_bump() {
        for i in 0..64u8 {
            let (m, op) = ([i; 32], [i.wrapping_mul(3); 32]);
            let s = seeds(&m, &op);
            let (pda, bump) = Pubkey::find_program_address(&s, &crate::ID);
            let ok = verify_canonical(&pda, &s, bump, &crate::ID, OncepayError::InvalidOperationAddress);
            assert!(ok.is_ok(), "bump {bump}");
            // The next valid bump below the canonical one is refused as non-canonical.
            if let Some((other, lower)) = (0..bump)
                .rev()
                .find_map(|b| Pubkey::create_program_address(&[s[0], s[1], s[2], &[b]], &crate::ID).ok().map(|k| (k, b)))
            {
                assert_eq!(
                    verify_canonical(&other, &s, lower, &crate::ID, OncepayError::InvalidOperationAddress),
                    Err(OncepayError::NonCanonicalBump.into())
                );
            }
        }
    }

    #[test]
    fn another_address_is_named() {
        let s = seeds(&[7; 32], &[9; 32]);
        let (_, bump) = Pubkey::find_program_address(&s, &crate::ID);
        assert_eq!(
            verify_canonical(&Pubkey::default(), &s, bump, &crate::ID, OncepayError::InvalidOperationAddress),
            Err(OncepayError::InvalidOperationAddress.into())
        );
    }
}
