//! Read-only views of SPL Token / Token-2022 accounts and mints (the fields
//! this program checks before its `transfer_checked` CPI).

use {crate::keys::read_u64, pinocchio::pubkey::Pubkey};

/// Base token account size; Token-2022 accounts with extensions are longer.
pub const ACCOUNT_LEN: usize = 165;
/// Base mint size.
pub const MINT_LEN: usize = 82;
/// Token-2022 stores an account-type byte here when extensions follow.
const ACCOUNT_TYPE_OFFSET: usize = 165;
const ACCOUNT_TYPE_MINT: u8 = 1;
const ACCOUNT_TYPE_ACCOUNT: u8 = 2;
/// `AccountState::Uninitialized`.
const STATE_UNINITIALIZED: u8 = 0;

/// The fields of a token account this program reads.
pub struct TokenAccount<'a> {
    pub mint: &'a Pubkey,
    /// The token authority (the "owner" field of the token account).
    pub authority: &'a Pubkey,
    pub amount: u64,
}

/// Parses an initialised token account (base layout, or a Token-2022 account
/// with extensions tagged as an account).
pub fn token_account(data: &[u8]) -> Option<TokenAccount<'_>> {
    if data.len() != ACCOUNT_LEN && data.get(ACCOUNT_TYPE_OFFSET) != Some(&ACCOUNT_TYPE_ACCOUNT) {
        return None;
    }
    if *data.get(108)? == STATE_UNINITIALIZED {
        return None;
    }
    Some(TokenAccount {
        mint: array_ref(data, 0)?,
        authority: array_ref(data, 32)?,
        amount: read_u64(array_ref(data, 64)?),
    })
}

/// Decimals of an initialised mint (base layout, or a Token-2022 mint with
/// extensions tagged as a mint).
pub fn mint_decimals(data: &[u8]) -> Option<u8> {
    if data.len() != MINT_LEN && data.get(ACCOUNT_TYPE_OFFSET) != Some(&ACCOUNT_TYPE_MINT) {
        return None;
    }
    // [44] decimals, [45] is_initialized.
    if *data.get(45)? != 1 {
        return None;
    }
    data.get(44).copied()
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
        assert!(token_account(&ext).is_none());
        ext[165] = 2;
        assert!(token_account(&ext).is_some());
        assert!(token_account(&account(165, 0)).is_none());
        let mut short = account(165, 1);
        short.truncate(82);
        assert!(token_account(&short).is_none());
    }

    #[test]
    fn parses_mints() {
        let mut m = std::vec![0u8; 82];
        m[44] = 6;
        assert_eq!(mint_decimals(&m), None);
        m[45] = 1;
        assert_eq!(mint_decimals(&m), Some(6));
        let mut ext = std::vec![0u8; 200];
        ext[44] = 9;
        ext[45] = 1;
        assert_eq!(mint_decimals(&ext), None);
        ext[165] = 1;
        assert_eq!(mint_decimals(&ext), Some(9));
    }
}
