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
//! ### Checks: signers → writable → system program → merchant address and
//! canonical bump (`InvalidMerchantAddress`, `NonCanonicalBump`) → not yet
//! initialised (`MerchantAlreadyInitialized`).
//!
//! Vaults are not registered here: any token account whose authority is the
//! merchant PDA is a vault of this merchant for its mint.

use {
    super::{arg, require_signer, require_writable},
    crate::{
        address::SYSTEM_PROGRAM,
        cpi,
        error::OncepayError,
        keys::{keys_eq, owned_by},
        pda, rent,
        state::{merchant::MERCHANT_SEED, Layout, Merchant},
    },
    pinocchio::{
        account_info::AccountInfo,
        instruction::{Seed, Signer},
        program_error::ProgramError,
        pubkey::Pubkey,
        ProgramResult,
    },
};

/// Argument bytes after the discriminator.
pub const ARGS_LEN: usize = 32 + 1;

pub fn process_initialize_merchant(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
) -> ProgramResult {
    let [merchant_authority, payer, merchant, system_program, ..] = accounts else {
        return Err(OncepayError::NotEnoughAccountKeys.into());
    };
    if args.len() != ARGS_LEN {
        return Err(OncepayError::InvalidInstructionData.into());
    }
    let payout_authority = arg::<32>(args, 0)?;
    let bump = arg::<1>(args, 32)?[0];

    // Signers, writable, programs.
    require_signer(merchant_authority)?;
    require_signer(payer)?;
    require_writable(payer)?;
    require_writable(merchant)?;
    if !keys_eq(system_program.key(), &SYSTEM_PROGRAM.0) {
        return Err(OncepayError::InvalidSystemProgram.into());
    }

    // Address and state.
    pda::verify_canonical(
        merchant.key(),
        &[MERCHANT_SEED, merchant_authority.key()],
        bump,
        program_id,
        OncepayError::InvalidMerchantAddress,
    )?;
    if owned_by(merchant, program_id) {
        return Err(OncepayError::MerchantAlreadyInitialized.into());
    }
    if !owned_by(merchant, &SYSTEM_PROGRAM.0) || !merchant.data_is_empty() {
        return Err(OncepayError::InvalidMerchantAddress.into());
    }

    // Effects.
    let bump_seed = [bump];
    let seeds = [
        Seed::from(MERCHANT_SEED),
        Seed::from(merchant_authority.key()),
        Seed::from(&bump_seed),
    ];
    let lamports = rent::minimum_balance(Merchant::LEN)?;
    cpi::create_pda_account(
        payer,
        merchant,
        lamports,
        Merchant::LEN as u64,
        program_id,
        &[Signer::from(&seeds)],
    )?;
    let mut data = merchant.try_borrow_mut_data()?;
    Merchant::from_bytes_mut_unchecked(&mut data)
        .ok_or(ProgramError::AccountDataTooSmall)?
        .init(merchant_authority.key(), payout_authority, bump);
    Ok(())
}
