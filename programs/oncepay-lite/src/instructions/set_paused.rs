//! `set_paused(paused: bool)`: stops or resumes payouts of a merchant.
//!
//! ### Accounts:
//!   0. `[signer]` merchant_authority
//!   1. `[writable]` merchant — config PDA of `merchant_authority`
//!
//! ### Data (after the discriminator): `[0]` paused (0 or 1).
//!
//! ### Checks: as the Anchor program's `UpdateMerchant` (see
//! `load_merchant_as_authority`); a bool byte other than 0/1 →
//! `InstructionDidNotDeserialize` (102).

use {
    super::{load_merchant_as_authority, Args},
    crate::anchor_error::Result,
    pinocchio::{account_info::AccountInfo, pubkey::Pubkey},
};

pub fn process_set_paused(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> Result {
    let paused = Args::new(args).bool()?;
    let mut config = load_merchant_as_authority(program_id, accounts)?;
    config.set_paused(paused);
    Ok(())
}
