//! `execute_payout(op_id: [u8; 32], amount: u64, op_bump: u8)`: pays `amount`
//! from a merchant vault to a recipient token account, at most once per
//! `(merchant, op_id)`.
//!
//! Anchor checks the accounts in two passes: first every account's type
//! (signers, owners, discriminators, token layouts, program ids), then each
//! field's constraints in field order (within a field: `seeds`, `mut`,
//! `has_one`, `constraint`s, `token::`/`mint::`). The op checks sit on
//! `operation`, before the token accounts' constraints, so a repeat of a paid
//! op_id answers 6000 whatever became of the vault since; the business rules
//! (paused, amount, balance) come after, in the handler, before any effect.

use {
    crate::{
        error::OncepayError,
        events::PayoutExecuted,
        pda_account::create_pda_account,
        state::{
            merchant::MERCHANT_SEED,
            operation::{Operation, OPERATION_SEED},
            Merchant,
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
    pub merchant: Account<'info, Merchant>,

    /// Operation PDA ["op", merchant, op_id], created here.
    /// CHECK: the constraints below; the handler creates it.
    // An `UncheckedAccount`, not `init`: a paid op_id must answer
    // OperationAlreadyConsumed (6000), and `init` would run before any
    // constraint and fail inside the System program ("already in use").
    #[account(
        mut,
        // The address, with the client's bump (`op_bump` is part of the
        // interface; the twin checks it instead of searching).
        seeds = [OPERATION_SEED, merchant.key().as_ref(), op_id.as_ref()],
        bump = op_bump,
        // ... and that bump is the canonical one: a lower valid bump would be
        // a second address for the same op_id, which would pay twice.
        constraint = op_bump == Pubkey::find_program_address(
            &[OPERATION_SEED, merchant.key().as_ref(), op_id.as_ref()],
            &crate::ID,
        ).1 @ OncepayError::NonCanonicalBump,
        // Paid: only this program can create an account at its PDA, and no
        // instruction closes one, so owned by us means this op_id was paid.
        constraint = operation.owner != &crate::ID
            @ OncepayError::OperationAlreadyConsumed,
        // Not paid: a System account without data, possibly pre-funded by
        // anyone (pda_account.rs). Nothing else can be at this address without
        // this program's signature; refused rather than assumed.
        constraint = operation.owner == &System::id() && operation.data_is_empty()
            @ OncepayError::InvalidOperationAddress,
    )]
    pub operation: UncheckedAccount<'info>,

    /// Token account whose authority is the merchant PDA.
    #[account(
        mut,
        token::authority = merchant,
        token::mint = mint,
        token::token_program = token_program,
    )]
    pub vault: InterfaceAccount<'info, TokenAccount>,

    #[account(mint::token_program = token_program)]
    pub mint: InterfaceAccount<'info, Mint>,

    /// Token account of `mint` that receives the payout.
    #[account(
        mut,
        // Anchor has no "distinct accounts" constraint; a payout from the vault
        // into itself would record a payment that moved nothing.
        constraint = recipient_token.key() != vault.key() @ OncepayError::InvalidRecipient,
        token::mint = mint,
        token::token_program = token_program,
    )]
    pub recipient_token: InterfaceAccount<'info, TokenAccount>,

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
    let a = ctx.accounts;
    require!(!a.merchant.paused, OncepayError::MerchantPaused);
    require!(amount > 0, OncepayError::InvalidAmount);
    require!(
        a.vault.amount >= amount,
        OncepayError::InsufficientVaultBalance
    );

    // The exactly-once step: the op account can be created only once.
    let merchant_key = a.merchant.key();
    create_pda_account(
        &a.payer,
        &a.operation,
        &a.system_program,
        Operation::LEN,
        &[OPERATION_SEED, merchant_key.as_ref(), &op_id, &[op_bump]],
    )?;

    // Move the tokens, signed by the merchant PDA with its stored bump.
    let merchant_bump = [a.merchant.bump];
    let merchant_seeds: &[&[&[u8]]] = &[&[
        MERCHANT_SEED,
        a.merchant.merchant_authority.as_ref(),
        &merchant_bump,
    ]];
    let transfer = TransferChecked {
        from: a.vault.to_account_info(),
        mint: a.mint.to_account_info(),
        to: a.recipient_token.to_account_info(),
        authority: a.merchant.to_account_info(),
    };
    transfer_checked(
        CpiContext::new_with_signer(a.token_program.to_account_info(), transfer, merchant_seeds),
        amount,
        a.mint.decimals,
    )?;

    // Record, then event.
    let slot = Clock::get()?.slot;
    let record = Operation {
        op_id,
        merchant: merchant_key,
        recipient: a.recipient_token.key(),
        mint: a.mint.key(),
        amount,
        slot,
        bump: op_bump,
    };
    record.try_serialize(&mut &mut a.operation.try_borrow_mut_data()?[..])?;
    emit!(PayoutExecuted {
        op_id,
        merchant: merchant_key,
        recipient: record.recipient,
        mint: record.mint,
        amount,
        slot,
    });
    Ok(())
}
