//! Program errors. Codes start at 6000 (Anchor's user-error offset) and are
//! part of the interface: clients branch on them (6000 means "already paid",
//! not "failed"). Never renumber, never reuse; append new rows at the end.
//!
//! One table: each row `Name = code, "message"` gives the variant, its
//! explicit discriminant, its IDL name and its IDL `msg`; [`error_table!`]
//! generates the enum, `ALL`, `name()`, `message()` and `From<…> for
//! ProgramError` from it. The IDL (`idl/oncepay.json`, built from the Anchor
//! program's `#[error_code]`) is the contract: a host test below compares this
//! table with it row by row, and the TypeScript tests read codes from the IDL.

use pinocchio::program_error::ProgramError;

/// One table of errors → the enum (explicit discriminants), `ALL` (in table
/// order), `name()`, `message()`, and, for `=> ProgramError`, `From<Enum> for
/// ProgramError` as `Custom(code)`. Rows are `Name = code, "message",` with
/// their doc comments.
macro_rules! error_table {
    (
        $(#[$meta:meta])*
        pub enum $Enum:ident => ProgramError {
            $($rows:tt)*
        }
    ) => {
        error_table! { $(#[$meta])* pub enum $Enum { $($rows)* } }

        impl From<$Enum> for ProgramError {
            #[inline(always)]
            fn from(e: $Enum) -> Self {
                ProgramError::Custom(e as u32)
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $Enum:ident {
            $($(#[$vmeta:meta])* $Name:ident = $code:literal, $msg:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum $Enum {
            $($(#[$vmeta])* $Name = $code,)*
        }

        impl $Enum {
            /// Every variant in table order.
            pub const ALL: [$Enum; [$($code),*].len()] = [$(Self::$Name),*];

            /// The variant's name, as in the IDL.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$Name => stringify!($Name),)*
                }
            }

            /// The message clients show (the IDL's `msg`).
            pub const fn message(self) -> &'static str {
                match self {
                    $(Self::$Name => $msg,)*
                }
            }
        }
    };
}
pub(crate) use error_table;

error_table! {
    /// Every error this program returns, as `ProgramError::Custom(code)`.
    pub enum OncepayError => ProgramError {
        /// 6000 - The operation PDA already exists: this op_id was paid out before.
        OperationAlreadyConsumed = 6000, "Operation already consumed: this op_id was paid out before",
        /// 6001 - The signer is not the merchant's payout (or merchant) authority.
        Unauthorized = 6001, "Signer is not the merchant's authority for this action",
        /// 6002 - The merchant is paused.
        MerchantPaused = 6002, "Merchant is paused",
        /// 6003 - The amount must be greater than zero.
        InvalidAmount = 6003, "Amount must be greater than zero",
        /// 6004 - The vault holds less than the amount.
        InsufficientVaultBalance = 6004, "Vault balance is lower than the amount",
        /// 6005 - The merchant account is not this program's merchant config.
        InvalidMerchantAccount = 6005, "Merchant account is not an oncepay merchant config",
        /// 6006 - The vault is not a token account owned by the merchant PDA.
        InvalidVault = 6006, "Vault is not a token account owned by the merchant PDA",
        /// 6007 - The vault, recipient and mint do not share one mint.
        MintMismatch = 6007, "Vault, recipient and mint do not share one mint",
        /// 6008 - The operation account is not the PDA ['op', merchant, op_id].
        InvalidOperationAddress = 6008, "Operation account is not the PDA ['op', merchant, op_id]",
        /// 6009 - The bump is not the canonical (highest valid) bump.
        NonCanonicalBump = 6009, "Bump is not the canonical bump",
        /// 6010 - The token program is neither SPL Token nor Token-2022, or does
        /// not own the vault, recipient and mint.
        InvalidTokenProgram = 6010, "Token program is not SPL Token or Token-2022, or does not own the token accounts",
        /// 6011 - A required signature is missing.
        MissingSignature = 6011, "A required signature is missing",
        /// 6012 - An account that must be writable is not.
        AccountNotWritable = 6012, "An account that must be writable is not",
        /// 6013 - The instruction data is malformed or has an unknown
        /// discriminator.
        InvalidInstructionData = 6013, "Instruction data is malformed",
        /// 6014 - Fewer accounts than the instruction needs.
        NotEnoughAccountKeys = 6014, "Not enough accounts",
        /// 6015 - The system program account is not the System program.
        InvalidSystemProgram = 6015, "System program account is not the System program",
        /// 6016 - The mint account is not a token mint.
        InvalidMint = 6016, "Mint account is not a token mint",
        /// 6017 - The recipient is not a token account, or is the vault itself.
        InvalidRecipient = 6017, "Recipient is not a token account, or is the vault",
        /// 6018 - The merchant account is not the PDA ['merchant',
        /// merchant_authority].
        InvalidMerchantAddress = 6018, "Merchant account is not the PDA ['merchant', merchant_authority]",
        /// 6019 - The merchant config already exists.
        MerchantAlreadyInitialized = 6019, "Merchant config already exists",
        /// 6020 - The Rent sysvar has an exemption threshold this program does not
        /// compute (only 1.0 and 2.0 are supported, without floats).
        UnsupportedRentSysvar = 6020, "Rent sysvar exemption threshold is not supported",
        /// 6021 - An arithmetic operation overflowed.
        ArithmeticOverflow = 6021, "Arithmetic overflow",
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

    /// The IDL's `errors` as (code, name, msg), read from the committed JSON
    /// (anchor-lang's own output: one object per error, one field per line).
    fn idl_errors() -> std::vec::Vec<(u32, std::string::String, std::string::String)> {
        let idl = include_str!("../../../idl/oncepay.json");
        let start = idl.find("\"errors\": [").expect("the IDL has errors");
        let end = start + idl[start..].find("\n  ]").expect("errors end");
        let field = |entry: &str, key: &str| -> std::string::String {
            let at = entry.find(&std::format!("\"{key}\": ")).expect(key) + key.len() + 4;
            let rest = &entry[at..];
            let value = &rest[..rest.find('\n').unwrap_or(rest.len())];
            let value = value.trim_end_matches(',');
            assert!(!value.contains('\\'), "no escapes expected: {value}");
            value.trim_matches('"').into()
        };
        idl[start..end]
            .split("\n    {")
            .skip(1)
            .map(|e| {
                (
                    field(e, "code").parse().unwrap(),
                    field(e, "name"),
                    field(e, "msg"),
                )
            })
            .collect()
    }

    #[test]
    fn the_table_is_the_idl_errors_row_by_row() {
        let idl = idl_errors();
        let ours: std::vec::Vec<_> = OncepayError::ALL
            .iter()
            .map(|e| (*e as u32, e.name().into(), e.message().into()))
            .collect();
        assert_eq!(ours, idl);
    }
}
