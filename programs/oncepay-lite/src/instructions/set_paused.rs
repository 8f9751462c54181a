//! `set_paused(paused: bool)`: stops or resumes payouts of a merchant.
//!
//! ### Accounts:
//!   0. `[signer]` merchant_authority
//!   1. `[writable]` merchant — config PDA of `merchant_authority`
//!
//! ### Data (after the discriminator): `[0]` paused (0 or 1).
//!
//! ### Checks: signer → writable → merchant owner, length, discriminator
//! (`InvalidMerchantAccount`) → merchant_authority matches (`Unauthorized`).

use {
    super::{bool_arg, load_merchant_as_authority},
    crate::error::OncepayError,
    pinocchio::{account_info::AccountInfo, pubkey::Pubkey, ProgramResult},
};

pub fn process_set_paused(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
) -> ProgramResult {
    let [merchant_authority, merchant, ..] = accounts else {
        return Err(OncepayError::NotEnoughAccountKeys.into());
    };
    let [paused] = args else {
        return Err(OncepayError::InvalidInstructionData.into());
    };
    let paused = bool_arg(*paused)?;

    let mut config = load_merchant_as_authority(program_id, merchant_authority, merchant)?;
    config.set_paused(paused);
    Ok(())
}
