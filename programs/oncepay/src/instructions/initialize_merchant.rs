//! `initialize_merchant(payout_authority: Pubkey, merchant_bump: u8)`:
//! creates the merchant config PDA. Vaults are not registered: any token
//! account whose authority is the merchant PDA is a vault of this merchant
//! for its mint.

use {
    crate::{
        error::OncepayError,
        pda_account::create_pda_account,
        state::{merchant::MERCHANT_SEED, Merchant},
    },
    anchor_lang::prelude::*,
};

#[derive(Accounts)]
pub struct InitializeMerchant<'info> {
    pub merchant_authority: Signer<'info>,

    #[account(mut)]
    pub payer: Signer<'info>,

    /// CHECK: the seeds below; the handler creates it.
    // An `UncheckedAccount`, not `init`, so that a second call answers
    // MerchantAlreadyInitialized (6019), not the System program's "already in
    // use". Bare `bump`: the canonical bump, found by `find_program_address`.
    #[account(mut, seeds = [MERCHANT_SEED, merchant_authority.key().as_ref()], bump)]
    pub merchant: UncheckedAccount<'info>,

    pub system_program: Program<'info, System>,
}

pub fn process_initialize_merchant(
    ctx: Context<InitializeMerchant>,
    payout_authority: Pubkey,
    merchant_bump: u8,
) -> Result<()> {
    // The argument is part of the interface (the twin checks it instead of
    // searching); here it must be the bump Anchor found.
    require!(
        merchant_bump == ctx.bumps.merchant,
        OncepayError::NonCanonicalBump
    );
    let a = ctx.accounts;
    // Only this program can create an account at its PDA: owned by us means
    // created before.
    require!(
        a.merchant.owner != &crate::ID,
        OncepayError::MerchantAlreadyInitialized
    );
    // A System account without data, possibly pre-funded by anyone
    // (pda_account.rs); nothing else can be here without our signature.
    require!(
        a.merchant.owner == &System::id() && a.merchant.data_is_empty(),
        OncepayError::InvalidMerchantAddress
    );
    let authority = a.merchant_authority.key();
    create_pda_account(
        &a.payer,
        &a.merchant,
        &a.system_program,
        Merchant::LEN,
        &[MERCHANT_SEED, authority.as_ref(), &[merchant_bump]],
    )?;
    let config = Merchant {
        merchant_authority: authority,
        payout_authority,
        paused: false,
        bump: merchant_bump,
    };
    config.try_serialize(&mut &mut a.merchant.try_borrow_mut_data()?[..])
}
