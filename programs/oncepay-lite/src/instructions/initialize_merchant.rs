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
//! system_program `Program<System>` (3008, 3009) → payer `mut` (2000) →
//! merchant `seeds` with the canonical bump (`ConstraintSeeds` 2006: the
//! account is not the canonical PDA, an on-curve address included) →
//! merchant `mut` (2000) → handler:
//! `merchant_bump` is that canonical bump (`NonCanonicalBump` 6009), not yet
//! initialised (`MerchantAlreadyInitialized` 6019), a fresh System account
//! (`InvalidMerchantAddress` 6018).
//!
//! The Anchor program finds the canonical bump with `find_program_address`;
//! here the given bump is checked (`pda::verify_canonical`) and, only when
//! that fails, the canonical address is searched to tell 2006 from 6009.
//!
//! Vaults are not registered here: any token account whose authority is the
//! merchant PDA is a vault of this merchant for its mint.

use {
    super::{account, mutable, signer, system_program_account, Args},
    crate::{
        address::SYSTEM_PROGRAM,
        anchor_error::{AnchorErrorCode, Failure, Result, RuntimeError},
        cpi,
        error::OncepayError,
        keys::owned_by,
        pda, rent,
        state::{merchant::MERCHANT_SEED, Layout, Merchant},
    },
    pinocchio::{
        account_info::AccountInfo,
        instruction::{Seed, Signer},
        pubkey::Pubkey,
    },
};

pub fn process_initialize_merchant(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
) -> Result {
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

    // Constraints.
    mutable(payer, "payer")?;
    let seeds: [&[u8]; 2] = [MERCHANT_SEED, merchant_authority.key()];
    let canonical = pda::verify_canonical(
        merchant.key(),
        &seeds,
        bump,
        program_id,
        OncepayError::InvalidMerchantAddress,
    );
    if canonical.is_err() {
        // The Anchor program's `seeds` constraint (canonical bump) fails
        // unless the account is the canonical PDA; then its handler refuses
        // the bump argument.
        return Err(
            if pda::is_canonical_address(merchant.key(), &seeds, program_id) {
                OncepayError::NonCanonicalBump.into()
            } else {
                Failure::from(AnchorErrorCode::ConstraintSeeds).at("merchant")
            },
        );
    }
    // `verify_canonical` leaves the off-curve part to the runtime (pda.rs): an
    // on-curve hash at a bump above the canonical one passes it, and only the
    // signer derivation of the CreateAccount below would refuse it. Anchor's
    // `seeds`/`bump` answers ConstraintSeeds there; so does this instruction,
    // for 159 CU on a rare path (execute_payout keeps leaving it to the
    // runtime: tests/programs/differences.ts).
    if pda::is_on_curve(merchant.key()) {
        return Err(Failure::from(AnchorErrorCode::ConstraintSeeds).at("merchant"));
    }
    mutable(merchant, "merchant")?;

    // Handler.
    if owned_by(merchant, program_id) {
        return Err(OncepayError::MerchantAlreadyInitialized.into());
    }
    if !owned_by(merchant, &SYSTEM_PROGRAM.0) || !merchant.data_is_empty() {
        return Err(OncepayError::InvalidMerchantAddress.into());
    }
    let bump_seed = [bump];
    let signer_seeds = [
        Seed::from(MERCHANT_SEED),
        Seed::from(merchant_authority.key()),
        Seed::from(&bump_seed),
    ];
    let lamports = rent::funding_lamports(Merchant::LEN)?;
    cpi::create_pda_account(
        payer,
        merchant,
        lamports,
        Merchant::LEN as u64,
        program_id,
        &[Signer::from(&signer_seeds)],
    );
    let mut data = merchant
        .try_borrow_mut_data()
        .map_err(|_| Failure::from(RuntimeError::AccountDataTooSmall))?;
    Merchant::from_bytes_mut_unchecked(&mut data)
        .ok_or(Failure::from(RuntimeError::AccountDataTooSmall))?
        .init(merchant_authority.key(), payout_authority, bump);
    Ok(())
}
