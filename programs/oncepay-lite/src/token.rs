//! Read-only views of SPL Token / Token-2022 accounts and mints, unpacked by
//! the rules of `spl_token_2022::extension::StateWithExtensions::unpack`
//! (what anchor-spl's `InterfaceAccount<TokenAccount>` / `<Mint>` use), so
//! both programs accept and refuse the same accounts:
//! - the base layout (165-byte account, 82-byte mint) decodes: a mint's
//!   `COption` tags and `is_initialized` bool are valid, else `Invalid` (see
//!   `token_account` for why an account's need no check); not initialised →
//!   `Uninitialized`;
//! - longer data is Token-2022's extended layout: never the 355-byte
//!   `Multisig` size, the padding after a mint's base is zero, the
//!   account-type byte at offset 165 names the right kind, and at least one
//!   byte follows it, else `Invalid`.

use {crate::keys::read_u64, pinocchio::pubkey::Pubkey};

/// Base token account size; Token-2022 accounts with extensions are longer.
pub const ACCOUNT_LEN: usize = 165;
/// Base mint size.
pub const MINT_LEN: usize = 82;
/// A token program's `Multisig` size: never a token account or a mint.
pub const MULTISIG_LEN: usize = 355;
/// Token-2022 stores an account-type byte here when extensions follow.
const ACCOUNT_TYPE_OFFSET: usize = 165;
const ACCOUNT_TYPE_MINT: u8 = 1;
const ACCOUNT_TYPE_ACCOUNT: u8 = 2;
/// `AccountState::Uninitialized`; 1 Initialized, 2 Frozen.
const STATE_UNINITIALIZED: u8 = 0;

/// Why a token layout does not unpack (`ProgramError::InvalidAccountData` /
/// `ProgramError::UninitializedAccount` in the token programs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnpackError {
    Invalid,
    Uninitialized,
}

/// The fields of a token account this program reads.
pub struct TokenAccount<'a> {
    pub mint: &'a Pubkey,
    /// The token authority (the "owner" field of the token account).
    pub authority: &'a Pubkey,
    pub amount: u64,
}

/// Unpacks an initialised token account (base layout, or a Token-2022
/// account with extensions).
pub fn token_account(data: &[u8]) -> Result<TokenAccount<'_>, UnpackError> {
    min_len_not_multisig(data, ACCOUNT_LEN)?;
    // The base's COption tags ([72..76], [109..113], [129..133]) and state
    // byte ([108], 0..=2) are not re-validated: every account a token program
    // owns was written by it, and the only layouts it writes that are not an
    // initialised token account — an uninitialised account (all zeros, state
    // 0), a mint (zero padding up to offset 165, so state 0), a multisig
    // (355 bytes) — are refused below exactly as Token-2022's unpacking
    // refuses them. (A mint's tags are checked: a token account passed as a
    // mint would otherwise decode differently.)
    let state = *data.get(108).ok_or(UnpackError::Invalid)?;
    if state == STATE_UNINITIALIZED {
        return Err(UnpackError::Uninitialized);
    }
    extension_tag(data, ACCOUNT_LEN, ACCOUNT_TYPE_ACCOUNT)?;
    Ok(TokenAccount {
        mint: array_ref(data, 0).ok_or(UnpackError::Invalid)?,
        authority: array_ref(data, 32).ok_or(UnpackError::Invalid)?,
        amount: read_u64(array_ref(data, 64).ok_or(UnpackError::Invalid)?),
    })
}

/// Decimals of an initialised mint (base layout, or a Token-2022 mint with
/// extensions).
pub fn mint_decimals(data: &[u8]) -> Result<u8, UnpackError> {
    min_len_not_multisig(data, MINT_LEN)?;
    // [0..4] mint_authority COption tag, [44] decimals, [45] is_initialized,
    // [46..50] freeze_authority tag.
    if !coption_tag(data, 0) || !coption_tag(data, 46) {
        return Err(UnpackError::Invalid);
    }
    match data.get(45) {
        Some(1) => {}
        Some(0) => return Err(UnpackError::Uninitialized),
        _ => return Err(UnpackError::Invalid),
    }
    extension_tag(data, MINT_LEN, ACCOUNT_TYPE_MINT)?;
    data.get(44).copied().ok_or(UnpackError::Invalid)
}

/// First rule of `StateWithExtensions::unpack`: at least the base, and never
/// the `Multisig` size.
#[inline(always)]
fn min_len_not_multisig(data: &[u8], base_len: usize) -> Result<(), UnpackError> {
    if data.len() < base_len || data.len() == MULTISIG_LEN {
        return Err(UnpackError::Invalid);
    }
    Ok(())
}

/// Last rule, for data longer than the base (Token-2022's extended layout):
/// the padding up to offset 165 is zero, the account-type byte there is
/// `account_type`, and at least one byte follows it.
#[inline(always)]
fn extension_tag(data: &[u8], base_len: usize, account_type: u8) -> Result<(), UnpackError> {
    if data.len() == base_len {
        return Ok(());
    }
    if data.len() <= ACCOUNT_TYPE_OFFSET + 1 {
        return Err(UnpackError::Invalid);
    }
    let padding = data
        .get(base_len..ACCOUNT_TYPE_OFFSET)
        .ok_or(UnpackError::Invalid)?;
    if padding.iter().any(|b| *b != 0) || data.get(ACCOUNT_TYPE_OFFSET) != Some(&account_type) {
        return Err(UnpackError::Invalid);
    }
    Ok(())
}

/// Whether the 4-byte `COption` tag at `at` is 0 (None) or 1 (Some).
#[inline(always)]
fn coption_tag(data: &[u8], at: usize) -> bool {
    matches!(array_ref::<4>(data, at), Some([0 | 1, 0, 0, 0]))
}

/// `N` bytes at `at`, without a panicking index.
#[inline(always)]
fn array_ref<const N: usize>(data: &[u8], at: usize) -> Option<&[u8; N]> {
    data.get(at..at.checked_add(N)?)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(len: usize, state: u8) -> std::vec::Vec<u8> {
        let mut d = std::vec![0u8; len];
        d[..32].copy_from_slice(&[1; 32]);
        d[32..64].copy_from_slice(&[2; 32]);
        d[64..72].copy_from_slice(&u64::MAX.to_le_bytes());
        d[108] = state;
        d
    }

    #[test]
    fn parses_base_and_extended_accounts() {
        let a = account(165, 1);
        let v = token_account(&a).unwrap();
        assert_eq!(v.mint, &[1; 32]);
        assert_eq!(v.authority, &[2; 32]);
        assert_eq!(v.amount, u64::MAX);
        let mut ext = account(170, 1);
        assert_eq!(token_account(&ext).err(), Some(UnpackError::Invalid));
        ext[165] = 2;
        assert!(token_account(&ext).is_ok());
        ext[165] = 1; // tagged as a mint
        assert_eq!(token_account(&ext).err(), Some(UnpackError::Invalid));
        assert_eq!(
            token_account(&account(165, 0)).err(),
            Some(UnpackError::Uninitialized)
        );
        let mut short = account(165, 1);
        short.truncate(82);
        assert_eq!(token_account(&short).err(), Some(UnpackError::Invalid));
        // Only the type byte, nothing after it: refused, as Token-2022 does.
        let mut bare = account(166, 1);
        bare[165] = 2;
        assert_eq!(token_account(&bare).err(), Some(UnpackError::Invalid));
    }

    #[test]
    fn a_multisig_is_never_a_token_account_or_a_mint() {
        // A 355-byte Multisig whose signer bytes put "account" (2) or "mint"
        // (1) at offset 165 and "initialized" at 108 / 45.
        for type_byte in [ACCOUNT_TYPE_ACCOUNT, ACCOUNT_TYPE_MINT] {
            let mut m = account(MULTISIG_LEN, 1);
            m[165] = type_byte;
            m[45] = 1;
            assert_eq!(token_account(&m).err(), Some(UnpackError::Invalid));
            assert_eq!(mint_decimals(&m).err(), Some(UnpackError::Invalid));
        }
    }

    #[test]
    fn parses_mints() {
        let mut m = std::vec![0u8; 82];
        m[44] = 6;
        assert_eq!(mint_decimals(&m), Err(UnpackError::Uninitialized));
        m[45] = 1;
        assert_eq!(mint_decimals(&m), Ok(6));
        m[45] = 2;
        assert_eq!(mint_decimals(&m), Err(UnpackError::Invalid));
        m[45] = 1;
        m[0] = 2; // mint_authority tag
        assert_eq!(mint_decimals(&m), Err(UnpackError::Invalid));
        let mut ext = std::vec![0u8; 200];
        ext[44] = 9;
        ext[45] = 1;
        assert_eq!(mint_decimals(&ext), Err(UnpackError::Invalid));
        ext[165] = 1;
        assert_eq!(mint_decimals(&ext), Ok(9));
        ext[100] = 1; // padding must be zero
        assert_eq!(mint_decimals(&ext), Err(UnpackError::Invalid));
    }
}
