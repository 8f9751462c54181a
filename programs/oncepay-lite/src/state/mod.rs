//! Account layouts. Every account starts with its 8-byte Anchor discriminator
//! (`sha256("account:<Name>")[..8]`) followed by its fields in Borsh order, so
//! Anchor's `BorshAccountsCoder` decodes them from the IDL. Fields are byte
//! arrays behind accessors: alignment 1, so a `&T` over account data is sound.

pub mod merchant;
pub mod operation;

pub use {merchant::Merchant, operation::Operation};

use {
    crate::error::OncepayError,
    pinocchio::{account_info::AccountInfo, program_error::ProgramError, pubkey::Pubkey},
};

/// A zero-copy account layout.
///
/// # Safety
/// Implementors must be `#[repr(C)]`, have alignment 1, be exactly `LEN`
/// bytes, and accept every bit pattern.
pub unsafe trait Layout: Sized {
    /// Size in bytes, discriminator included.
    const LEN: usize;
    /// `sha256("account:<Name>")[..8]`.
    const DISCRIMINATOR: [u8; 8];

    /// Views `data` as `Self` after checking length and discriminator.
    #[inline(always)]
    fn from_bytes(data: &[u8]) -> Option<&Self> {
        const { assert!(core::mem::align_of::<Self>() == 1) };
        if data.len() != Self::LEN || data.get(..8)? != Self::DISCRIMINATOR {
            return None;
        }
        // SAFETY: length checked above, alignment is 1 (const-asserted) and
        // every bit pattern is valid (trait contract).
        Some(unsafe { &*(data.as_ptr() as *const Self) })
    }

    /// Mutable view over exactly `LEN` bytes, without the discriminator
    /// check (used to write a freshly created account).
    #[inline(always)]
    fn from_bytes_mut_unchecked(data: &mut [u8]) -> Option<&mut Self> {
        const { assert!(core::mem::align_of::<Self>() == 1) };
        if data.len() != Self::LEN {
            return None;
        }
        // SAFETY: length checked, alignment 1, every bit pattern valid.
        Some(unsafe { &mut *(data.as_mut_ptr() as *mut Self) })
    }
}

/// Loads `T` from `account`: checks owner, then length and discriminator;
/// any failure is `err`.
///
/// # Safety
/// No mutable borrow of the account's data may be alive while the returned
/// reference is used (the processors only write after their last read).
#[inline(always)]
pub unsafe fn load<'a, T: Layout>(
    account: &'a AccountInfo,
    owner: &Pubkey,
    err: OncepayError,
) -> Result<&'a T, OncepayError> {
    if !crate::keys::owned_by(account, owner) {
        return Err(err);
    }
    // SAFETY: the caller guarantees no mutable borrow is alive.
    let data = unsafe { account.borrow_data_unchecked() };
    T::from_bytes(data).ok_or(err)
}

/// Mutable [`load`]: owner, length and discriminator checked, then the data
/// borrowed mutably through the account's borrow flag.
#[inline(always)]
pub fn load_mut<'a, T: Layout>(
    account: &'a AccountInfo,
    owner: &Pubkey,
    err: OncepayError,
) -> Result<pinocchio::account_info::RefMut<'a, T>, ProgramError> {
    if !crate::keys::owned_by(account, owner) {
        return Err(err.into());
    }
    let data = account.try_borrow_mut_data()?;
    pinocchio::account_info::RefMut::filter_map(data, |d| {
        if d.get(..8) == Some(&T::DISCRIMINATOR[..]) {
            T::from_bytes_mut_unchecked(d)
        } else {
            None
        }
    })
    .map_err(|_| err.into())
}
