//! `execute_payout(op_id: [u8; 32], amount: u64, op_bump: u8)`: pays `amount`
//! from a merchant vault to a recipient token account, at most once per
//! `(merchant, op_id)`.
//!
//! ### Accounts (order is the interface; the SDK codes against it):
//!   0. `[signer]` payout_authority — the merchant's payout authority
//!   1. `[signer, writable]` payer — funds the operation account's rent
//!   2. `[]` merchant — config PDA `["merchant", merchant_authority]`
//!   3. `[writable]` operation — PDA `["op", merchant, op_id]`, created here
//!   4. `[writable]` vault — token account whose authority is `merchant`
//!   5. `[]` mint
//!   6. `[writable]` recipient_token — token account of `mint`
//!   7. `[]` token_program — SPL Token or Token-2022
//!   8. `[]` system_program
//!
//! ### Data (after the 8-byte discriminator): `[0..32]` op_id, `[32..40]`
//! amount (u64 LE), `[40]` op_bump.
//!
//! ### Checks, in this order (first failure wins):
//!   1. accounts present, data length → `NotEnoughAccountKeys`,
//!      `InvalidInstructionData`
//!   2. signers: payout_authority, payer → `MissingSignature`
//!   3. writable: payer, operation, vault, recipient → `AccountNotWritable`
//!   4. programs: token_program ∈ {Token, Token-2022} →
//!      `InvalidTokenProgram`; system_program → `InvalidSystemProgram`
//!   5. owners: merchant by this program → `InvalidMerchantAccount`; vault,
//!      mint, recipient by token_program → `InvalidTokenProgram`
//!   6. layouts: merchant length + discriminator → `InvalidMerchantAccount`;
//!      vault → `InvalidVault`; recipient → `InvalidRecipient`; mint →
//!      `InvalidMint`
//!   7. payout_authority == merchant.payout_authority → `Unauthorized`
//!   8. operation == hash of the op seeds with op_bump →
//!      `InvalidOperationAddress`; op_bump canonical → `NonCanonicalBump`
//!      (that the address is off the curve is enforced by the runtime when
//!      it derives the signer of the op-seeded CPI below; see `pda.rs`)
//!   9. operation not yet created → `OperationAlreadyConsumed` (checked
//!      before the business checks below, so a repeat of a paid op_id always
//!      answers 6000, even once the vault is empty or the merchant paused)
//!  10. merchant not paused → `MerchantPaused`
//!  11. amount > 0 → `InvalidAmount`
//!  12. vault authority == merchant → `InvalidVault`
//!  13. vault mint == mint == recipient mint → `MintMismatch`; recipient ≠
//!      vault → `InvalidRecipient`
//!  14. vault amount ≥ amount → `InsufficientVaultBalance`
//!
//! ### Effects (all or nothing):
//! create `operation` (pre-funded-safe) → `transfer_checked` vault →
//! recipient signed by the merchant PDA → write the `Operation` record →
//! emit `PayoutExecuted`.

use {
    super::{arg, require_signer, require_writable},
    crate::{
        address::{SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM},
        cpi,
        error::OncepayError,
        events,
        keys::{keys_eq, owned_by},
        pda, rent,
        state::{
            load,
            merchant::MERCHANT_SEED,
            operation::{OperationRecord, OPERATION_SEED},
            Layout, Merchant, Operation,
        },
        token,
    },
    pinocchio::{
        account_info::AccountInfo,
        instruction::{Seed, Signer},
        program_error::ProgramError,
        pubkey::Pubkey,
        sysvars::{clock::Clock, Sysvar},
        ProgramResult,
    },
};

/// Parsed `execute_payout` arguments.
#[derive(Debug, PartialEq, Eq)]
pub struct ExecutePayoutArgs<'a> {
    pub op_id: &'a [u8; 32],
    pub amount: u64,
    pub op_bump: u8,
}

/// Argument bytes after the discriminator.
pub const ARGS_LEN: usize = 32 + 8 + 1;

/// Parses the arguments; the length must be exact.
pub fn parse_args(args: &[u8]) -> Result<ExecutePayoutArgs<'_>, OncepayError> {
    if args.len() != ARGS_LEN {
        return Err(OncepayError::InvalidInstructionData);
    }
    Ok(ExecutePayoutArgs {
        op_id: arg::<32>(args, 0)?,
        amount: u64::from_le_bytes(*arg::<8>(args, 32)?),
        op_bump: arg::<1>(args, 40)?[0],
    })
}

pub fn process_execute_payout(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
) -> ProgramResult {
    // 1. Accounts and data.
    let [payout_authority, payer, merchant, operation, vault, mint, recipient, token_program, system_program, ..] =
        accounts
    else {
        return Err(OncepayError::NotEnoughAccountKeys.into());
    };
    let ExecutePayoutArgs {
        op_id,
        amount,
        op_bump,
    } = parse_args(args)?;

    crate::cu_checkpoint!();
    // 2. Signers.
    require_signer(payout_authority)?;
    require_signer(payer)?;

    // 3. Writable.
    require_writable(payer)?;
    require_writable(operation)?;
    require_writable(vault)?;
    require_writable(recipient)?;

    // 4. Programs.
    let token_program_id = token_program.key();
    if !keys_eq(token_program_id, &TOKEN_PROGRAM.0)
        && !keys_eq(token_program_id, &TOKEN_2022_PROGRAM.0)
    {
        return Err(OncepayError::InvalidTokenProgram.into());
    }
    if !keys_eq(system_program.key(), &SYSTEM_PROGRAM.0) {
        return Err(OncepayError::InvalidSystemProgram.into());
    }

    // 5-6. Owners, then layouts and discriminators.
    // SAFETY: nothing borrows the merchant's data mutably in this instruction.
    let config =
        unsafe { load::<Merchant>(merchant, program_id, OncepayError::InvalidMerchantAccount)? };
    if !owned_by(vault, token_program_id)
        || !owned_by(mint, token_program_id)
        || !owned_by(recipient, token_program_id)
    {
        return Err(OncepayError::InvalidTokenProgram.into());
    }
    // SAFETY: nothing borrows these accounts' data mutably before the CPI
    // below, and these shared views are not used after it.
    let (vault_data, mint_data, recipient_data) = unsafe {
        (
            vault.borrow_data_unchecked(),
            mint.borrow_data_unchecked(),
            recipient.borrow_data_unchecked(),
        )
    };
    let vault_account = token::token_account(vault_data).ok_or(OncepayError::InvalidVault)?;
    let recipient_account =
        token::token_account(recipient_data).ok_or(OncepayError::InvalidRecipient)?;
    let decimals = token::mint_decimals(mint_data).ok_or(OncepayError::InvalidMint)?;

    crate::cu_checkpoint!();
    // 7. Authority.
    if !keys_eq(config.payout_authority(), payout_authority.key()) {
        return Err(OncepayError::Unauthorized.into());
    }

    crate::cu_checkpoint!();
    // 8. Operation address, canonical bump.
    pda::verify_canonical(
        operation.key(),
        &[OPERATION_SEED, merchant.key(), op_id],
        op_bump,
        program_id,
        OncepayError::InvalidOperationAddress,
    )?;

    crate::cu_checkpoint!();
    // 9. Not yet consumed. Only this program can create an account at the op
    // PDA, and it never closes one: owned by us means paid.
    if owned_by(operation, program_id) {
        return Err(OncepayError::OperationAlreadyConsumed.into());
    }
    if !owned_by(operation, &SYSTEM_PROGRAM.0) || !operation.data_is_empty() {
        return Err(OncepayError::InvalidOperationAddress.into());
    }

    crate::cu_checkpoint!();
    // 10-14. Business rules.
    if config.paused() {
        return Err(OncepayError::MerchantPaused.into());
    }
    if amount == 0 {
        return Err(OncepayError::InvalidAmount.into());
    }
    if !keys_eq(vault_account.authority, merchant.key()) {
        return Err(OncepayError::InvalidVault.into());
    }
    if !keys_eq(vault_account.mint, mint.key()) || !keys_eq(recipient_account.mint, mint.key()) {
        return Err(OncepayError::MintMismatch.into());
    }
    if keys_eq(vault.key(), recipient.key()) {
        return Err(OncepayError::InvalidRecipient.into());
    }
    if vault_account.amount < amount {
        return Err(OncepayError::InsufficientVaultBalance.into());
    }
    let merchant_bump = [config.bump()];
    let merchant_authority = *config.merchant_authority();

    crate::cu_checkpoint!();
    // Effects. Create the operation account: this is the exactly-once step.
    let op_bump_seed = [op_bump];
    let op_seeds = [
        Seed::from(OPERATION_SEED),
        Seed::from(merchant.key()),
        Seed::from(op_id),
        Seed::from(&op_bump_seed),
    ];
    let lamports = rent::minimum_balance(Operation::LEN)?;
    cpi::create_pda_account(
        payer,
        operation,
        lamports,
        Operation::LEN as u64,
        program_id,
        &[Signer::from(&op_seeds)],
    )?;

    crate::cu_checkpoint!();
    // Move the tokens, signed by the merchant PDA with its stored bump.
    let merchant_seeds = [
        Seed::from(MERCHANT_SEED),
        Seed::from(&merchant_authority),
        Seed::from(&merchant_bump),
    ];
    cpi::transfer_checked(
        token_program_id,
        vault,
        mint,
        recipient,
        merchant,
        amount,
        decimals,
        &[Signer::from(&merchant_seeds)],
    )?;

    crate::cu_checkpoint!();
    // Record.
    let slot = Clock::get()?.slot;
    let mut op_data = operation.try_borrow_mut_data()?;
    let record = Operation::from_bytes_mut_unchecked(&mut op_data)
        .ok_or(ProgramError::AccountDataTooSmall)?;
    record.write(&OperationRecord {
        op_id,
        merchant: merchant.key(),
        recipient: recipient.key(),
        mint: mint.key(),
        amount,
        slot,
        bump: op_bump,
    });

    crate::cu_checkpoint!();
    events::emit(&events::encode_payout_executed(
        op_id,
        merchant.key(),
        recipient.key(),
        mint.key(),
        amount,
        slot,
    ));
    crate::cu_checkpoint!();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exact_arguments() {
        let mut data = [0u8; ARGS_LEN];
        data[..32].copy_from_slice(&[5; 32]);
        data[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        data[40] = 253;
        assert_eq!(
            parse_args(&data),
            Ok(ExecutePayoutArgs {
                op_id: &[5; 32],
                amount: u64::MAX,
                op_bump: 253
            })
        );
    }

    #[test]
    fn rejects_short_and_long_data() {
        assert_eq!(
            parse_args(&[0u8; ARGS_LEN - 1]),
            Err(OncepayError::InvalidInstructionData)
        );
        assert_eq!(
            parse_args(&[0u8; ARGS_LEN + 1]),
            Err(OncepayError::InvalidInstructionData)
        );
    }
}
