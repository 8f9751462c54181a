//! Program errors. Codes start at 6000 (Anchor's user-error offset) in
//! declaration order and are part of the interface: clients branch on them
//! (6000 means "already paid", not "failed"). Never reorder, never remove;
//! append new variants at the end. The lean twin (programs/oncepay-lite)
//! declares the same table.
//!
//! Some variants are answered only by the twin: where this program relies on
//! an Anchor account type or constraint, Anchor's own error answers (e.g.
//! `AccountNotSigner` 3010 where the twin says `MissingSignature`); the
//! README's error table says which.

use anchor_lang::prelude::*;

#[error_code]
pub enum OncepayError {
    #[msg("Operation already consumed: this op_id was paid out before")]
    OperationAlreadyConsumed,
    #[msg("Signer is not the merchant's authority for this action")]
    Unauthorized,
    #[msg("Merchant is paused")]
    MerchantPaused,
    #[msg("Amount must be greater than zero")]
    InvalidAmount,
    #[msg("Vault balance is lower than the amount")]
    InsufficientVaultBalance,
    #[msg("Merchant account is not an oncepay merchant config")]
    InvalidMerchantAccount,
    #[msg("Vault is not a token account owned by the merchant PDA")]
    InvalidVault,
    #[msg("Vault, recipient and mint do not share one mint")]
    MintMismatch,
    #[msg("Operation account is not the PDA ['op', merchant, op_id]")]
    InvalidOperationAddress,
    #[msg("Bump is not the canonical bump")]
    NonCanonicalBump,
    #[msg("Token program is not SPL Token or Token-2022, or does not own the token accounts")]
    InvalidTokenProgram,
    #[msg("A required signature is missing")]
    MissingSignature,
    #[msg("An account that must be writable is not")]
    AccountNotWritable,
    #[msg("Instruction data is malformed")]
    InvalidInstructionData,
    #[msg("Not enough accounts")]
    NotEnoughAccountKeys,
    #[msg("System program account is not the System program")]
    InvalidSystemProgram,
    #[msg("Mint account is not a token mint")]
    InvalidMint,
    #[msg("Recipient is not a token account, or is the vault")]
    InvalidRecipient,
    #[msg("Merchant account is not the PDA ['merchant', merchant_authority]")]
    InvalidMerchantAddress,
    #[msg("Merchant config already exists")]
    MerchantAlreadyInitialized,
    #[msg("Rent sysvar exemption threshold is not supported")]
    UnsupportedRentSysvar,
    #[msg("Arithmetic overflow")]
    ArithmeticOverflow,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_clients_rely_on_are_pinned() {
        let code = |e: OncepayError| u32::from(e);
        assert_eq!(code(OncepayError::OperationAlreadyConsumed), 6000);
        assert_eq!(code(OncepayError::Unauthorized), 6001);
        assert_eq!(code(OncepayError::MerchantPaused), 6002);
        assert_eq!(code(OncepayError::InsufficientVaultBalance), 6004);
        assert_eq!(code(OncepayError::NonCanonicalBump), 6009);
        assert_eq!(code(OncepayError::MerchantAlreadyInitialized), 6019);
        assert_eq!(code(OncepayError::ArithmeticOverflow), 6021);
    }
}
