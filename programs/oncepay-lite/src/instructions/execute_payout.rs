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
//! ### Checks, in the order of the Anchor program's `ExecutePayout` (first
//! failure wins; `@account` = the account Anchor's log names):
//!   1. arguments decode → `InstructionDidNotDeserialize` (102)
//!   2. account types, in field order (a missing account →
//!      `AccountNotEnoughKeys` 3005):
//!      payout_authority, payer: `Signer` → `AccountNotSigner` (3010);
//!      merchant: `Account<Merchant>` → `AccountNotInitialized` (3012),
//!      `AccountOwnedByWrongProgram` (3007), `AccountDiscriminatorNotFound`
//!      (3001), `AccountDiscriminatorMismatch` (3002),
//!      `AccountDidNotDeserialize` (3003);
//!      vault, mint, recipient_token: `InterfaceAccount` → 3012, 3007 (not a
//!      token program's), then the token program's `InvalidAccountData` /
//!      `UninitializedAccount` (see `token.rs`);
//!      token_program: `Interface<TokenInterface>`, system_program:
//!      `Program<System>` → `InvalidProgramId` (3008),
//!      `InvalidProgramExecutable` (3009)
//!   3. constraints, in field order:
//!      payer `mut` → `ConstraintMut` (2000);
//!      merchant `has_one = payout_authority` → `Unauthorized` (6001) (its
//!      `seeds` constraint cannot fail here: only `initialize_merchant`
//!      creates a `Merchant`, at the PDA of its stored authority and bump);
//!      operation `seeds = ["op", merchant, op_id], bump = op_bump` →
//!      `ConstraintSeeds` (2006) (that the address is off the curve is
//!      enforced by the runtime when it derives the signer of the op-seeded
//!      CPI below; see `pda.rs`), `mut` → 2000, then `op_bump` canonical →
//!      `NonCanonicalBump` (6009), then not yet created →
//!      `OperationAlreadyConsumed` (6000), not a fresh System account →
//!      `InvalidOperationAddress` (6008): a repeat of a paid op_id answers
//!      6000 before every check below, even once the vault is empty or the
//!      merchant paused;
//!      vault `mut` → 2000, `token::authority = merchant` →
//!      `ConstraintTokenOwner` (2015), `token::mint` → `ConstraintTokenMint`
//!      (2014), `token::token_program` → `ConstraintTokenTokenProgram` (2021);
//!      mint `mint::token_program` → `ConstraintMintTokenProgram` (2022);
//!      recipient_token `mut` → 2000, not the vault → `InvalidRecipient`
//!      (6017), `token::mint` → 2014, `token::token_program` → 2021
//!   4. handler: not paused → `MerchantPaused` (6002); amount > 0 →
//!      `InvalidAmount` (6003); vault amount ≥ amount →
//!      `InsufficientVaultBalance` (6004)
//!
//! ### Effects (all or nothing):
//! create `operation` (pre-funded-safe, at least 1 lamport) →
//! `transfer_checked` vault → recipient signed by the merchant PDA → write
//! the `Operation` record → emit `PayoutExecuted`.

use {
    super::{
        account, mint_account, mutable, owned_by_token_program, program_account, signer,
        system_program_account, token_account, token_program_account, Args,
    },
    crate::{
        address::SYSTEM_PROGRAM,
        anchor_error::{AnchorErrorCode, Failure, Result, RuntimeError},
        cpi,
        error::OncepayError,
        events,
        keys::{keys_eq, owned_by},
        pda, rent,
        state::{
            merchant::MERCHANT_SEED,
            operation::{OperationRecord, OPERATION_SEED},
            Layout, Merchant, Operation,
        },
    },
    pinocchio::{
        account_info::AccountInfo,
        instruction::{Seed, Signer},
        pubkey::Pubkey,
        sysvars::{clock::Clock, Sysvar},
    },
};

/// Parsed `execute_payout` arguments.
#[derive(Debug, PartialEq, Eq)]
pub struct ExecutePayoutArgs<'a> {
    pub op_id: &'a [u8; 32],
    pub amount: u64,
    pub op_bump: u8,
}

/// Argument bytes after the discriminator (more are ignored, as Borsh does).
pub const ARGS_LEN: usize = 32 + 8 + 1;

/// Decodes the arguments (Borsh: a prefix of the data).
pub fn parse_args(args: &[u8]) -> Result<ExecutePayoutArgs<'_>> {
    let mut a = Args::new(args);
    Ok(ExecutePayoutArgs {
        op_id: a.bytes::<32>()?,
        amount: a.u64()?,
        op_bump: a.u8()?,
    })
}

pub fn process_execute_payout(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
) -> Result {
    // 1. Arguments.
    let ExecutePayoutArgs {
        op_id,
        amount,
        op_bump,
    } = parse_args(args)?;

    crate::cu_checkpoint!();
    // 2. Account types, in field order.
    let payout_authority = account(accounts, 0)?;
    signer(payout_authority, "payout_authority")?;
    let payer = account(accounts, 1)?;
    signer(payer, "payer")?;
    let merchant = account(accounts, 2)?;
    // SAFETY: nothing borrows the merchant's data mutably in this instruction.
    let config = unsafe { program_account::<Merchant>(merchant, program_id, "merchant")? };
    let operation = account(accounts, 3)?;
    // SAFETY (the three below): nothing borrows these accounts' data mutably
    // before the transfer CPI, and these views are not used after it.
    let vault = account(accounts, 4)?;
    let (vault_account, vault_owner) = unsafe { token_account(vault, "vault")? };
    let mint = account(accounts, 5)?;
    let (decimals, mint_owner) = unsafe { mint_account(mint, "mint")? };
    let recipient = account(accounts, 6)?;
    let (recipient_account, recipient_owner) =
        unsafe { token_account(recipient, "recipient_token")? };
    let token_program = account(accounts, 7)?;
    let token_program_kind = token_program_account(token_program, "token_program")?;
    let system_program = account(accounts, 8)?;
    system_program_account(system_program, "system_program")?;

    crate::cu_checkpoint!();
    // 3. Constraints, in field order.
    mutable(payer, "payer")?;
    if !keys_eq(config.payout_authority(), payout_authority.key()) {
        return Err(Failure::from(OncepayError::Unauthorized).at("merchant"));
    }

    let op_seeds_bytes: [&[u8]; 3] = [OPERATION_SEED, merchant.key(), op_id];
    if !pda::is_address(operation.key(), &op_seeds_bytes, op_bump, program_id) {
        return Err(Failure::from(AnchorErrorCode::ConstraintSeeds).at("operation"));
    }
    mutable(operation, "operation")?;
    crate::cu_checkpoint!();
    pda::verify_no_higher_bump(&op_seeds_bytes, op_bump, program_id)?;
    crate::cu_checkpoint!();
    // Only this program can create an account at the op PDA, and it never
    // closes one: owned by us means paid.
    if owned_by(operation, program_id) {
        return Err(Failure::from(OncepayError::OperationAlreadyConsumed).at("operation"));
    }
    if !owned_by(operation, &SYSTEM_PROGRAM.0) || !operation.data_is_empty() {
        return Err(OncepayError::InvalidOperationAddress.into());
    }

    mutable(vault, "vault")?;
    if !keys_eq(vault_account.authority, merchant.key()) {
        return Err(AnchorErrorCode::ConstraintTokenOwner.into());
    }
    if !keys_eq(vault_account.mint, mint.key()) {
        return Err(AnchorErrorCode::ConstraintTokenMint.into());
    }
    owned_by_token_program(
        vault_owner,
        token_program_kind,
        AnchorErrorCode::ConstraintTokenTokenProgram,
    )?;
    owned_by_token_program(
        mint_owner,
        token_program_kind,
        AnchorErrorCode::ConstraintMintTokenProgram,
    )?;
    mutable(recipient, "recipient_token")?;
    if keys_eq(recipient.key(), vault.key()) {
        return Err(Failure::from(OncepayError::InvalidRecipient).at("recipient_token"));
    }
    if !keys_eq(recipient_account.mint, mint.key()) {
        return Err(AnchorErrorCode::ConstraintTokenMint.into());
    }
    owned_by_token_program(
        recipient_owner,
        token_program_kind,
        AnchorErrorCode::ConstraintTokenTokenProgram,
    )?;

    crate::cu_checkpoint!();
    // 4. Handler rules.
    if config.paused() {
        return Err(OncepayError::MerchantPaused.into());
    }
    if amount == 0 {
        return Err(OncepayError::InvalidAmount.into());
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
    let lamports = rent::funding_lamports(Operation::LEN)?;
    cpi::create_pda_account(
        payer,
        operation,
        lamports,
        Operation::LEN as u64,
        program_id,
        &[Signer::from(&op_seeds)],
    );

    crate::cu_checkpoint!();
    // Move the tokens, signed by the merchant PDA with its stored bump.
    let merchant_seeds = [
        Seed::from(MERCHANT_SEED),
        Seed::from(&merchant_authority),
        Seed::from(&merchant_bump),
    ];
    cpi::transfer_checked(
        token_program.key(),
        vault,
        mint,
        recipient,
        merchant,
        amount,
        decimals,
        &[Signer::from(&merchant_seeds)],
    );

    crate::cu_checkpoint!();
    // Record.
    let slot = Clock::get()
        .map_err(|_| Failure::from(RuntimeError::UnsupportedSysvar))?
        .slot;
    let mut op_data = operation
        .try_borrow_mut_data()
        .map_err(|_| Failure::from(RuntimeError::AccountDataTooSmall))?;
    let record = Operation::from_bytes_mut_unchecked(&mut op_data)
        .ok_or(Failure::from(RuntimeError::AccountDataTooSmall))?;
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
    use {super::*, crate::anchor_error::Kind};

    #[test]
    fn parses_arguments_as_borsh() {
        let mut data = [0u8; ARGS_LEN + 3];
        data[..32].copy_from_slice(&[5; 32]);
        data[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        data[40] = 253;
        let expected = ExecutePayoutArgs {
            op_id: &[5; 32],
            amount: u64::MAX,
            op_bump: 253,
        };
        assert_eq!(parse_args(&data[..ARGS_LEN]), Ok(expected));
        // Trailing bytes are ignored (Borsh from a slice), as in the Anchor program.
        assert_eq!(parse_args(&data).map(|a| a.op_bump), Ok(253));
    }

    #[test]
    fn short_data_does_not_deserialize() {
        assert_eq!(
            parse_args(&[0u8; ARGS_LEN - 1]).err().map(|f| f.kind),
            Some(Kind::Anchor(AnchorErrorCode::InstructionDidNotDeserialize))
        );
    }
}
