//! `set_payout_authority(new_payout_authority: Pubkey)`: replaces who may
//! sign payouts.
//!
//! ### Accounts:
//!   0. `[signer]` merchant_authority
//!   1. `[writable]` merchant — config PDA of `merchant_authority`
//!
//! ### Data (after the discriminator): `[0..32]` new_payout_authority.
//!
//! ### Checks: signer → writable → merchant owner, length, discriminator
//! (`InvalidMerchantAccount`) → merchant_authority matches (`Unauthorized`).

use {
    super::{arg, load_merchant_as_authority},
    crate::error::OncepayError,
    pinocchio::{account_info::AccountInfo, pubkey::Pubkey, ProgramResult},
};

pub fn process_set_payout_authority(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
) -> ProgramResult {
    let [merchant_authority, merchant, ..] = accounts else {
        return Err(OncepayError::NotEnoughAccountKeys.into());
    };
    if args.len() != 32 {
        return Err(OncepayError::InvalidInstructionData.into());
    }
    let new_payout_authority = arg::<32>(args, 0)?;

    let mut config = load_merchant_as_authority(program_id, merchant_authority, merchant)?;
    config.set_payout_authority(new_payout_authority);
    Ok(())
}
