//! Account layouts: Anchor's `#[account]` (8-byte discriminator
//! `sha256("account:<Name>")[..8]`, then the fields in Borsh order). Every
//! field is a byte array, a `Pubkey`, a `u64`, a `bool` or a `u8`, so Borsh
//! writes exactly the bytes the lean twin's `#[repr(C)]` views read: no
//! padding, no reordering, no `zero_copy` needed. The host tests pin every
//! offset.

pub mod merchant;
pub mod operation;

pub use {merchant::Merchant, operation::Operation};

use anchor_lang::{prelude::*, Discriminator};

/// Whether `account`'s data starts with `T`'s discriminator: for an account
/// at one of our PDAs, whether this program already wrote it. (An account
/// Anchor's `init_if_needed` has just created is all zeros.)
pub fn is_written<T: Discriminator>(account: &AccountInfo) -> bool {
    account
        .try_borrow_data()
        .map(|d| d.starts_with(T::DISCRIMINATOR))
        // Fail closed: an account we cannot read counts as written.
        .unwrap_or(true)
}

/// Refuses an account a zero rent rate left at 0 lamports: the runtime
/// would delete it at the end of the transaction, and the same PDA could be
/// created (paid) again.
pub fn require_funded(account: &AccountInfo) -> Result<()> {
    require!(account.lamports() > 0, crate::error::OncepayError::UnsupportedRentSysvar);
    Ok(())
}
