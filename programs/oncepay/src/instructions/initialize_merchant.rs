//! `initialize_merchant(payout_authority: Pubkey, merchant_bump: u8)`:
//! creates the merchant config PDA. Vaults are not registered: any token
//! account whose authority is the merchant PDA is a vault of this merchant
//! for its mint.

use {
    crate::{
        error::OncepayError,
        state::{is_written, merchant::MERCHANT_SEED, require_funded, Merchant},
    },
    anchor_lang::prelude::*,
};

#[derive(Accounts)]
pub struct InitializeMerchant<'info> {
    pub merchant_authority: Signer<'info>,

    #[account(mut)]
    pub payer: Signer<'info>,

    // `init_if_needed` + our constraint, so that a second call answers
    // MerchantAlreadyInitialized (6019), not the System program's "already
    // in use" (see execute_payout.rs). `bump`: the canonical bump, found by
    // Anchor.
    #[account(
        init_if_needed,
        payer = payer,
        space = Merchant::LEN,
        seeds = [MERCHANT_SEED, merchant_authority.key().as_ref()],
        bump,
        constraint = !is_written::<Merchant>(&merchant.to_account_info())
            @ OncepayError::MerchantAlreadyInitialized,
    )]
    pub merchant: Account<'info, Merchant>,

    pub system_program: Program<'info, System>,
}

pub fn process_initialize_merchant(
    ctx: Context<InitializeMerchant>,
    payout_authority: Pubkey,
    merchant_bump: u8,
) -> Result<()> {
    // The argument is part of the interface (the twin checks it instead of
    // searching); here it must be the bump Anchor found.
    require!(merchant_bump == ctx.bumps.merchant, OncepayError::NonCanonicalBump);
    let a = ctx.accounts;
    require_funded(&a.merchant.to_account_info())?;
    a.merchant.set_inner(Merchant {
        merchant_authority: a.merchant_authority.key(),
        payout_authority,
        paused: false,
        bump: merchant_bump,
    });
    Ok(())
}
