//! `execute_payout(op_id: [u8; 32], amount: u64, op_bump: u8)`: pays `amount`
//! from a merchant vault to a recipient token account, at most once per
//! `(merchant, op_id)`.
//!
//! Anchor checks the accounts in two passes: first every account's type
//! (signers, programs, owners, discriminators, token layouts), then each
//! field's constraints in field order. The op check sits on `operation`,
//! before the token constraints, so a repeat of a paid op_id answers 6000
//! whatever became of the vault since; the business rules (paused, amount,
//! balance) come after, in the handler, before any effect.

use {
    crate::{
        cpi,
        error::OncepayError,
        events::PayoutExecuted,
        pda,
        program_account::{self, PdaState},
        state::{
            merchant::MERCHANT_SEED,
            operation::{Operation, OPERATION_SEED},
            Merchant,
        },
        token::{Mint, TokenAccount},
    },
    anchor_lang::prelude::*,
    anchor_spl::token_interface::TokenInterface,
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
    // No `seeds` constraint here (set_paused and set_payout_authority have
    // one): it would cost 1,500 CU (create_program_address) on every payout
    // and prove nothing more. A `Merchant` owned by this program exists only
    // at its PDA (initialize_merchant checks the seeds), and the transfer
    // below is signed with the stored seeds and bump, so the token program
    // sees no signature unless this account is that PDA.
    #[account(has_one = payout_authority @ OncepayError::Unauthorized)]
    pub merchant: Account<'info, Merchant>,

    /// Operation PDA ["op", merchant, op_id], created here.
    /// CHECK: created by the handler; see the comment below.
    // The address is proven by `pda::is_address` (the hash of the seeds with
    // the client's `op_bump`, ~200 CU), not by `seeds = [...], bump = op_bump`
    // (create_program_address, 1,500 CU on every payout); it answers the same
    // error, ConstraintSeeds. The off-curve part is left to the runtime, which
    // derives the op-seeded signer of the account's creation below (pda.rs).
    // The IDL still lists the seeds: the idl-build line says them to Anchor's
    // IDL builder exactly as the constraint would (a host build only; the
    // program never runs it).
    // `unconsumed` proves op_bump canonical (pda.rs) and answers 6000 when the
    // account exists. Not `init`: it runs before every other constraint and
    // answers an existing account with the System program's "already in use"
    // (custom error 0); the handler creates the account as `init` would
    // (program_account.rs).
    #[cfg_attr(
        feature = "idl-build",
        account(seeds = [OPERATION_SEED, merchant.key().as_ref(), op_id.as_ref()], bump = op_bump)
    )]
    #[account(
        mut,
        constraint = pda::is_address(&operation.key(), &[OPERATION_SEED, merchant.key().as_ref(), &op_id], op_bump, &crate::ID)
            @ anchor_lang::error::ErrorCode::ConstraintSeeds,
        constraint = unconsumed(&operation, &merchant.key(), &op_id, op_bump)?
            @ OncepayError::OperationAlreadyConsumed,
    )]
    pub operation: UncheckedAccount<'info>,

    /// Token account whose authority is the merchant PDA.
    #[account(
        mut,
        token::mint = mint,
        token::authority = merchant,
        token::token_program = token_program,
    )]
    pub vault: InterfaceAccount<'info, TokenAccount>,

    #[account(mint::token_program = token_program)]
    pub mint: InterfaceAccount<'info, Mint>,

    /// Token account of `mint` that receives the payout.
    #[account(
        mut,
        token::mint = mint,
        token::token_program = token_program,
        constraint = recipient_token.key() != vault.key() @ OncepayError::InvalidRecipient,
    )]
    pub recipient_token: InterfaceAccount<'info, TokenAccount>,

    /// SPL Token or Token-2022.
    pub token_program: Interface<'info, TokenInterface>,

    pub system_program: Program<'info, System>,
}

/// Whether the op account (the PDA `["op", merchant, op_id]` with `op_bump`,
/// as `pda::is_address` proved) is still to be created:
/// `Err(NonCanonicalBump)` when a higher bump gives a PDA, `Ok(false)` when
/// this program already created it (paid), `Ok(true)` when it is a fresh
/// (possibly pre-funded) system account, `Err(InvalidOperationAddress)`
/// otherwise.
pub fn unconsumed(
    operation: &AccountInfo,
    merchant: &Pubkey,
    op_id: &[u8; 32],
    op_bump: u8,
) -> Result<bool> {
    crate::cu_checkpoint!();
    pda::verify_no_higher_bump(
        &[OPERATION_SEED, merchant.as_ref(), op_id],
        op_bump,
        &crate::ID,
    )?;
    match program_account::pda_state(operation) {
        PdaState::Fresh => Ok(true),
        PdaState::Created => Ok(false),
        PdaState::Foreign => err!(OncepayError::InvalidOperationAddress),
    }
}

pub fn process_execute_payout(
    ctx: Context<ExecutePayout>,
    op_id: [u8; 32],
    amount: u64,
    op_bump: u8,
) -> Result<()> {
    crate::cu_checkpoint!();
    let a = ctx.accounts;
    require!(!a.merchant.paused, OncepayError::MerchantPaused);
    require!(amount > 0, OncepayError::InvalidAmount);
    require!(
        a.vault.amount >= amount,
        OncepayError::InsufficientVaultBalance
    );

    // The exactly-once step: the op account can be created only once.
    let merchant_key = a.merchant.key();
    program_account::create_pda(
        &a.payer.to_account_info(),
        &a.operation.to_account_info(),
        &a.system_program.to_account_info(),
        Operation::LEN,
        &[OPERATION_SEED, merchant_key.as_ref(), &op_id, &[op_bump]],
    )?;

    crate::cu_checkpoint!();
    // Move the tokens, signed by the merchant PDA with its stored bump.
    let merchant_seeds: &[&[u8]] = &[
        MERCHANT_SEED,
        a.merchant.merchant_authority.as_ref(),
        &[a.merchant.bump],
    ];
    cpi::transfer_checked(
        a.token_program.key,
        &a.vault.to_account_info(),
        &a.mint.to_account_info(),
        &a.recipient_token.to_account_info(),
        &a.merchant.to_account_info(),
        amount,
        a.mint.decimals,
        &[merchant_seeds],
    )?;

    crate::cu_checkpoint!();
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
    crate::cu_checkpoint!();
    emit!(PayoutExecuted {
        op_id,
        merchant: merchant_key,
        recipient: record.recipient,
        mint: record.mint,
        amount,
        slot,
    });
    crate::cu_checkpoint!();
    Ok(())
}
