//! Program errors. Codes start at 6000 (Anchor's user-error offset) and are
//! part of the interface: clients branch on them (6000 means "already paid",
//! not "failed"). Never renumber, never reuse; append new variants at the end.

use pinocchio::program_error::ProgramError;

/// Every error this program returns, as `ProgramError::Custom(code)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum OncepayError {
    // 6000
    /// 6000 - The operation PDA already exists: this op_id was paid out before.
    OperationAlreadyConsumed = 6000,
    /// 6001 - The signer is not the merchant's payout (or merchant) authority.
    Unauthorized,
    /// 6002 - The merchant is paused.
    MerchantPaused,
    /// 6003 - The amount must be greater than zero.
    InvalidAmount,
    /// 6004 - The vault holds less than the amount.
    InsufficientVaultBalance,
    // 6005
    /// 6005 - The merchant account is not this program's merchant config.
    InvalidMerchantAccount,
    /// 6006 - The vault is not a token account owned by the merchant PDA.
    InvalidVault,
    /// 6007 - The vault, recipient and mint do not share one mint.
    MintMismatch,
    /// 6008 - The operation account is not the PDA ['op', merchant, op_id].
    InvalidOperationAddress,
    /// 6009 - The bump is not the canonical (highest valid) bump.
    NonCanonicalBump,
    // 6010
    /// 6010 - The token program is neither SPL Token nor Token-2022, or does
    /// not own the vault, recipient and mint.
    InvalidTokenProgram,
    /// 6011 - A required signature is missing.
    MissingSignature,
    /// 6012 - An account that must be writable is not.
    AccountNotWritable,
    /// 6013 - The instruction data is malformed or has an unknown
    /// discriminator.
    InvalidInstructionData,
    /// 6014 - Fewer accounts than the instruction needs.
    NotEnoughAccountKeys,
    // 6015
    /// 6015 - The system program account is not the System program.
    InvalidSystemProgram,
    /// 6016 - The mint account is not a token mint.
    InvalidMint,
    /// 6017 - The recipient is not a token account, or is the vault itself.
    InvalidRecipient,
    /// 6018 - The merchant account is not the PDA ['merchant',
    /// merchant_authority].
    InvalidMerchantAddress,
    /// 6019 - The merchant config already exists.
    MerchantAlreadyInitialized,
    // 6020
    /// 6020 - The Rent sysvar has an exemption threshold this program does not
    /// compute (only 1.0 and 2.0 are supported, without floats).
    UnsupportedRentSysvar,
    /// 6021 - An arithmetic operation overflowed.
    ArithmeticOverflow,
}

impl OncepayError {
    /// Every variant in code order (the IDL generator and tests walk it).
    pub const ALL: [OncepayError; 22] = [
        Self::OperationAlreadyConsumed,
        Self::Unauthorized,
        Self::MerchantPaused,
        Self::InvalidAmount,
        Self::InsufficientVaultBalance,
        Self::InvalidMerchantAccount,
        Self::InvalidVault,
        Self::MintMismatch,
        Self::InvalidOperationAddress,
        Self::NonCanonicalBump,
        Self::InvalidTokenProgram,
        Self::MissingSignature,
        Self::AccountNotWritable,
        Self::InvalidInstructionData,
        Self::NotEnoughAccountKeys,
        Self::InvalidSystemProgram,
        Self::InvalidMint,
        Self::InvalidRecipient,
        Self::InvalidMerchantAddress,
        Self::MerchantAlreadyInitialized,
        Self::UnsupportedRentSysvar,
        Self::ArithmeticOverflow,
    ];

    /// The variant's name, as in the IDL.
    pub const fn name(self) -> &'static str {
        match self {
            Self::OperationAlreadyConsumed => "OperationAlreadyConsumed",
            Self::Unauthorized => "Unauthorized",
            Self::MerchantPaused => "MerchantPaused",
            Self::InvalidAmount => "InvalidAmount",
            Self::InsufficientVaultBalance => "InsufficientVaultBalance",
            Self::InvalidMerchantAccount => "InvalidMerchantAccount",
            Self::InvalidVault => "InvalidVault",
            Self::MintMismatch => "MintMismatch",
            Self::InvalidOperationAddress => "InvalidOperationAddress",
            Self::NonCanonicalBump => "NonCanonicalBump",
            Self::InvalidTokenProgram => "InvalidTokenProgram",
            Self::MissingSignature => "MissingSignature",
            Self::AccountNotWritable => "AccountNotWritable",
            Self::InvalidInstructionData => "InvalidInstructionData",
            Self::NotEnoughAccountKeys => "NotEnoughAccountKeys",
            Self::InvalidSystemProgram => "InvalidSystemProgram",
            Self::InvalidMint => "InvalidMint",
            Self::InvalidRecipient => "InvalidRecipient",
            Self::InvalidMerchantAddress => "InvalidMerchantAddress",
            Self::MerchantAlreadyInitialized => "MerchantAlreadyInitialized",
            Self::UnsupportedRentSysvar => "UnsupportedRentSysvar",
            Self::ArithmeticOverflow => "ArithmeticOverflow",
        }
    }

    /// The message clients show (the IDL's `msg`).
    pub const fn message(self) -> &'static str {
        match self {
            Self::OperationAlreadyConsumed => {
                "Operation already consumed: this op_id was paid out before"
            }
            Self::Unauthorized => "Signer is not the merchant's authority for this action",
            Self::MerchantPaused => "Merchant is paused",
            Self::InvalidAmount => "Amount must be greater than zero",
            Self::InsufficientVaultBalance => "Vault balance is lower than the amount",
            Self::InvalidMerchantAccount => "Merchant account is not an oncepay merchant config",
            Self::InvalidVault => "Vault is not a token account owned by the merchant PDA",
            Self::MintMismatch => "Vault, recipient and mint do not share one mint",
            Self::InvalidOperationAddress => {
                "Operation account is not the PDA ['op', merchant, op_id]"
            }
            Self::NonCanonicalBump => "Bump is not the canonical bump",
            Self::InvalidTokenProgram => {
                "Token program is not SPL Token or Token-2022, or does not own the token accounts"
            }
            Self::MissingSignature => "A required signature is missing",
            Self::AccountNotWritable => "An account that must be writable is not",
            Self::InvalidInstructionData => "Instruction data is malformed",
            Self::NotEnoughAccountKeys => "Not enough accounts",
            Self::InvalidSystemProgram => "System program account is not the System program",
            Self::InvalidMint => "Mint account is not a token mint",
            Self::InvalidRecipient => "Recipient is not a token account, or is the vault",
            Self::InvalidMerchantAddress => {
                "Merchant account is not the PDA ['merchant', merchant_authority]"
            }
            Self::MerchantAlreadyInitialized => "Merchant config already exists",
            Self::UnsupportedRentSysvar => "Rent sysvar exemption threshold is not supported",
            Self::ArithmeticOverflow => "Arithmetic overflow",
        }
    }
}

impl From<OncepayError> for ProgramError {
    #[inline(always)]
    fn from(e: OncepayError) -> Self {
        ProgramError::Custom(e as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_dense_from_6000_and_never_renumbered() {
        for (i, e) in OncepayError::ALL.iter().enumerate() {
            assert_eq!(*e as u32, 6000 + i as u32, "{}", e.name());
        }
        // Pinned codes clients rely on.
        assert_eq!(OncepayError::OperationAlreadyConsumed as u32, 6000);
        assert_eq!(OncepayError::Unauthorized as u32, 6001);
        assert_eq!(OncepayError::MerchantPaused as u32, 6002);
        assert_eq!(OncepayError::InsufficientVaultBalance as u32, 6004);
        assert_eq!(OncepayError::ArithmeticOverflow as u32, 6021);
    }

    #[test]
    fn maps_to_custom_program_error() {
        assert_eq!(
            ProgramError::from(OncepayError::OperationAlreadyConsumed),
            ProgramError::Custom(6000)
        );
    }
}
