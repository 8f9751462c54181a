//! `set_paused(paused: bool)` and `set_payout_authority(new_payout_authority:
//! Pubkey)`: the merchant authority changes its config. Both take the same
//! two accounts.

use {
    crate::{
        error::OncepayError,
        state::{merchant::MERCHANT_SEED, Merchant},
    },
    anchor_lang::prelude::*,
};

#[derive(Accounts)]
pub struct UpdateMerchant<'info> {
    pub merchant_authority: Signer<'info>,

    // Seeds from the stored authority, so that another signer answers
    // `Unauthorized` (has_one) rather than a seeds mismatch.
    #[account(
        mut,
        seeds = [MERCHANT_SEED, merchant.merchant_authority.as_ref()],
        bump = merchant.bump,
        has_one = merchant_authority @ OncepayError::Unauthorized,
    )]
    pub merchant: Account<'info, Merchant>,
}

pub fn process_set_paused(ctx: Context<UpdateMerchant>, paused: bool) -> Result<()> {
    ctx.accounts.merchant.paused = paused;
    Ok(())
}

pub fn process_set_payout_authority(
    ctx: Context<UpdateMerchant>,
    new_payout_authority: Pubkey,
) -> Result<()> {
    ctx.accounts.merchant.payout_authority = new_payout_authority;
    Ok(())
}
