//! `initialize_merchant(payout_authority: Pubkey, merchant_bump: u8)`:
//! creates the merchant config PDA.
//!
//! ### Accounts:
//!   0. `[signer]` merchant_authority — owns the config (PDA seed)
//!   1. `[signer, writable]` payer — funds the config's rent
//!   2. `[writable]` merchant — PDA `["merchant", merchant_authority]`
//!   3. `[]` system_program
//!
//! ### Data (after the discriminator): `[0..32]` payout_authority, `[32]`
//! merchant_bump (canonical).
//!
//! ### Checks, in the order of the Anchor program's `InitializeMerchant`:
//! arguments decode (102) → merchant_authority, payer `Signer` (3010) →
//! system_program `Program<System>` (3008, 3009) → merchant
//! `init_if_needed` with `seeds` and the canonical bump (2006; created, or
//! an existing config refused: `MerchantAlreadyInitialized` 6019; see
//! `init_if_needed`) → payer `mut` (2000) → handler: `merchant_bump` is the
//! canonical bump (`NonCanonicalBump` 6009), the config is funded
//! (`UnsupportedRentSysvar` 6020 at a zero rent rate).
//!
//! Vaults are not registered here: any token account whose authority is the
//! merchant PDA is a vault of this merchant for its mint.

use {
    super::{account, init_if_needed, mutable, require_funded, signer, system_program_account, Args},
    crate::{
        anchor_error::{Failure, Result, RuntimeError},
        error::OncepayError,
        state::{merchant::MERCHANT_SEED, Layout, Merchant},
    },
    pinocchio::{account_info::AccountInfo, pubkey::Pubkey},
};

pub fn process_initialize_merchant(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> Result {
    let mut a = Args::new(args);
    let payout_authority = a.bytes::<32>()?;
    let bump = a.u8()?;

    // Account types.
    let merchant_authority = account(accounts, 0)?;
    signer(merchant_authority, "merchant_authority")?;
    let payer = account(accounts, 1)?;
    signer(payer, "payer")?;
    let merchant = account(accounts, 2)?;
    let system_program = account(accounts, 3)?;
    system_program_account(system_program, "system_program")?;

    // Constraints: the `init_if_needed` field first, then payer `mut`.
    let created = init_if_needed::<Merchant>(
        program_id,
        payer,
        merchant,
        &[MERCHANT_SEED, merchant_authority.key()],
        bump,
        "merchant",
        OncepayError::MerchantAlreadyInitialized,
    )?;
    mutable(payer, "payer")?;

    // Handler.
    if !created.bump_arg_ok {
        return Err(OncepayError::NonCanonicalBump.into());
    }
    require_funded(merchant)?;
    let mut data = merchant
        .try_borrow_mut_data()
        .map_err(|_| Failure::from(RuntimeError::AccountDataTooSmall))?;
    Merchant::from_bytes_mut_unchecked(&mut data)
        .ok_or(Failure::from(RuntimeError::AccountDataTooSmall))?
        .init(merchant_authority.key(), payout_authority, created.bump);
    Ok(())
}
