//! oncepay: an on-chain payout program that pays each operation id at most
//! once.
//!
//! `execute_payout` creates the operation PDA `["op", merchant, op_id]` and
//! moves the tokens in one atomic instruction; the PDA can never be created
//! twice, so a payout can never be applied twice, whatever the delivery does.
//!
//! This crate is written the way Anchor's own examples are: every PDA by
//! `seeds` and `bump`, accounts created through anchor-lang's
//! `system_program` helpers, tokens moved with anchor-spl's
//! `token_interface::transfer_checked`. programs/oncepay-lite is its lean twin
//! (no_std, pinocchio): the same interface and answers at about a third of
//! the compute units. The audit guide is README.md.

use anchor_lang::prelude::*;

pub mod error;
pub mod events;
pub mod instructions;
pub mod pda_account;
pub mod state;

use instructions::*;

declare_id!("5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj");

#[program]
pub mod oncepay {
    use super::*;

    /// Pays `amount` from a merchant vault to `recipient_token` at most once per (merchant, op_id).
    pub fn execute_payout(
        ctx: Context<ExecutePayout>,
        op_id: [u8; 32],
        amount: u64,
        op_bump: u8,
    ) -> Result<()> {
        process_execute_payout(ctx, op_id, amount, op_bump)
    }

    /// Creates the merchant config PDA. Vaults are any token accounts whose authority is that PDA.
    pub fn initialize_merchant(
        ctx: Context<InitializeMerchant>,
        payout_authority: Pubkey,
        merchant_bump: u8,
    ) -> Result<()> {
        process_initialize_merchant(ctx, payout_authority, merchant_bump)
    }

    /// Stops or resumes payouts (merchant authority only).
    pub fn set_paused(ctx: Context<UpdateMerchant>, paused: bool) -> Result<()> {
        process_set_paused(ctx, paused)
    }

    /// Replaces who may sign payouts (merchant authority only).
    pub fn set_payout_authority(
        ctx: Context<UpdateMerchant>,
        new_payout_authority: Pubkey,
    ) -> Result<()> {
        process_set_payout_authority(ctx, new_payout_authority)
    }
}
