//! `set_payout_authority(new_payout_authority: Pubkey)`: replaces who may
//! sign payouts.
//!
//! ### Accounts:
//!   0. `[signer]` merchant_authority
//!   1. `[writable]` merchant — config PDA of `merchant_authority`
//!
//! ### Data (after the discriminator): `[0..32]` new_payout_authority.
//!
//! ### Checks: as the Anchor program's `UpdateMerchant` (see
//! `load_merchant_as_authority`).

use {
    super::{load_merchant_as_authority, Args},
    crate::anchor_error::Result,
    pinocchio::{account_info::AccountInfo, pubkey::Pubkey},
};

pub fn process_set_payout_authority(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
) -> Result {
    let new_payout_authority = Args::new(args).bytes::<32>()?;
    let mut config = load_merchant_as_authority(program_id, accounts)?;
    config.set_payout_authority(new_payout_authority);
    Ok(())
}
