//! Instructions: one file each, one `process_<ix>` each. Anchor
//! discriminators (`sha256("global:<ix>")[..8]`) and Borsh little-endian
//! arguments.

pub mod execute_payout;
pub mod initialize_merchant;
pub mod set_paused;
pub mod set_payout_authority;

pub use {
    execute_payout::process_execute_payout, initialize_merchant::process_initialize_merchant,
    set_paused::process_set_paused, set_payout_authority::process_set_payout_authority,
};

use {
    crate::{
        discriminator::discriminator,
        error::OncepayError,
        keys::keys_eq,
        state::{load_mut, Merchant},
    },
    pinocchio::{
        account_info::{AccountInfo, RefMut},
        program_error::ProgramError,
        pubkey::Pubkey,
    },
};

/// `global:execute_payout`.
pub const EXECUTE_PAYOUT: [u8; 8] = discriminator(b"global:execute_payout");
/// `global:initialize_merchant`.
pub const INITIALIZE_MERCHANT: [u8; 8] = discriminator(b"global:initialize_merchant");
/// `global:set_payout_authority`.
pub const SET_PAYOUT_AUTHORITY: [u8; 8] = discriminator(b"global:set_payout_authority");
/// `global:set_paused`.
pub const SET_PAUSED: [u8; 8] = discriminator(b"global:set_paused");

#[inline(always)]
pub(crate) fn require_signer(account: &AccountInfo) -> Result<(), OncepayError> {
    if account.is_signer() {
        Ok(())
    } else {
        Err(OncepayError::MissingSignature)
    }
}

#[inline(always)]
pub(crate) fn require_writable(account: &AccountInfo) -> Result<(), OncepayError> {
    if account.is_writable() {
        Ok(())
    } else {
        Err(OncepayError::AccountNotWritable)
    }
}

/// The merchant-authority gate of `set_paused` and `set_payout_authority`,
/// in this order: `merchant_authority` signed (`MissingSignature`) →
/// `merchant` writable (`AccountNotWritable`) → merchant owner, length,
/// discriminator (`InvalidMerchantAccount`) → `merchant_authority` is the
/// config's (`Unauthorized`). Returns the config borrowed mutably.
#[inline(always)]
pub(crate) fn load_merchant_as_authority<'a>(
    program_id: &Pubkey,
    merchant_authority: &AccountInfo,
    merchant: &'a AccountInfo,
) -> Result<RefMut<'a, Merchant>, ProgramError> {
    require_signer(merchant_authority)?;
    require_writable(merchant)?;
    let config = load_mut::<Merchant>(merchant, program_id, OncepayError::InvalidMerchantAccount)?;
    if !keys_eq(config.merchant_authority(), merchant_authority.key()) {
        return Err(OncepayError::Unauthorized.into());
    }
    Ok(config)
}

/// `N` bytes at `at` of the instruction arguments.
#[inline(always)]
pub(crate) fn arg<const N: usize>(args: &[u8], at: usize) -> Result<&[u8; N], OncepayError> {
    args.get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .ok_or(OncepayError::InvalidInstructionData)
}

/// Borsh `bool`: exactly 0 or 1.
#[inline(always)]
pub(crate) fn bool_arg(byte: u8) -> Result<bool, OncepayError> {
    match byte {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(OncepayError::InvalidInstructionData),
    }
}
