//! `execute_payout(op_id: [u8; 32], amount: u64, op_bump: u8)`: pays `amount`
//! from a merchant vault to a recipient token account, at most once per
//! `(merchant, op_id)`.
//!
//! Order of checks (Anchor's): every account's type in field order (signers,
//! programs, owners, discriminators, token layouts); then the `init` field
//! (`operation`) with its constraints; then the other fields' constraints in
//! field order; then the handler. So a repeat of a paid op_id answers 6000
//! before any other constraint and before the business rules (paused,
//! amount, balance): clients rely on 6000 meaning "already done", even once
//! the vault was emptied or the merchant paused.

use {
    crate::{
        error::OncepayError,
        events::PayoutExecuted,
        state::{
            is_written,
            merchant::MERCHANT_SEED,
            operation::{Operation, OPERATION_SEED},
            require_funded, Merchant,
        },
    },
    anchor_lang::prelude::*,
    anchor_spl::token_interface::{
        transfer_checked, Mint, TokenAccount, TokenInterface, TransferChecked,
    },
};

#[derive(Accounts)]
#[instruction(op_id: [u8; 32], amount: u64, op_bump: u8)]
pub struct ExecutePayout<'info> {
    /// The merchant's payout authority.
    pub payout_authority: Signer<'info>,

    /// Funds the operation account's rent.
    #[account(mut)]
    pub payer: Signer<'info>,

    /// Merchant config PDA ["merchant", merchant_authority].
    #[account(
        seeds = [MERCHANT_SEED, merchant.merchant_authority.as_ref()],
        bump = merchant.bump,
        has_one = payout_authority @ OncepayError::Unauthorized,
    )]
    pub merchant: Box<Account<'info, Merchant>>,

    /// Operation PDA ["op", merchant, op_id], created here.
    // `init_if_needed`, not `init`: on an existing account `init` fails inside
    // the System program ("already in use", custom error 0); here the
    // existing account is loaded (owner and discriminator checked) and the
    // constraint answers 6000. A fresh address is created the way `init`
    // does, pre-funded or not. `bump`: Anchor finds the canonical bump
    // (`find_program_address`); the handler checks `op_bump` against it.
    #[account(
        init_if_needed,
        payer = payer,
        space = Operation::LEN,
        seeds = [OPERATION_SEED, merchant.key().as_ref(), op_id.as_ref()],
        bump,
        constraint = !is_written::<Operation>(&operation.to_account_info())
            @ OncepayError::OperationAlreadyConsumed,
    )]
    pub operation: Box<Account<'info, Operation>>,

    /// Token account whose authority is the merchant PDA.
    #[account(
        mut,
        token::mint = mint,
        token::authority = merchant,
        token::token_program = token_program,
    )]
    pub vault: Box<InterfaceAccount<'info, TokenAccount>>,

    #[account(mint::token_program = token_program)]
    pub mint: Box<InterfaceAccount<'info, Mint>>,

    /// Token account of `mint` that receives the payout.
    #[account(
        mut,
        token::mint = mint,
        token::token_program = token_program,
        constraint = recipient_token.key() != vault.key() @ OncepayError::InvalidRecipient,
    )]
    pub recipient_token: Box<InterfaceAccount<'info, TokenAccount>>,

    /// SPL Token or Token-2022.
    pub token_program: Interface<'info, TokenInterface>,

    pub system_program: Program<'info, System>,
}

pub fn process_execute_payout(
    ctx: Context<ExecutePayout>,
    op_id: [u8; 32],
    amount: u64,
    op_bump: u8,
) -> Result<()> {
    // The argument is part of the interface (the twin checks it instead of
    // searching); here it must be the bump Anchor found.
    require!(op_bump == ctx.bumps.operation, OncepayError::NonCanonicalBump);
    let a = ctx.accounts;
    require!(!a.merchant.paused, OncepayError::MerchantPaused);
    require!(amount > 0, OncepayError::InvalidAmount);
    require!(a.vault.amount >= amount, OncepayError::InsufficientVaultBalance);
    require_funded(&a.operation.to_account_info())?;

    // Move the tokens, signed by the merchant PDA with its stored bump.
    let merchant_seeds: &[&[u8]] = &[
        MERCHANT_SEED,
        a.merchant.merchant_authority.as_ref(),
        &[a.merchant.bump],
    ];
    let signer = &[merchant_seeds];
    let transfer = TransferChecked {
        from: a.vault.to_account_info(),
        mint: a.mint.to_account_info(),
        to: a.recipient_token.to_account_info(),
        authority: a.merchant.to_account_info(),
    };
    transfer_checked(
        CpiContext::new_with_signer(a.token_program.to_account_info(), transfer, signer),
        amount,
        a.mint.decimals,
    )?;

    // Record (written with its discriminator when the instruction exits),
    // then event.
    let record = Operation {
        op_id,
        merchant: a.merchant.key(),
        recipient: a.recipient_token.key(),
        mint: a.mint.key(),
        amount,
        slot: Clock::get()?.slot,
        bump: op_bump,
    };
    emit!(PayoutExecuted {
        op_id,
        merchant: record.merchant,
        recipient: record.recipient,
        mint: record.mint,
        amount,
        slot: record.slot,
    });
    a.operation.set_inner(record);
    Ok(())
}
