//! Answering like Anchor. Where the Anchor program (programs/oncepay) fails in
//! the framework — an account type (`Signer`, `Account`, `InterfaceAccount`,
//! `Interface`, `Program`) or a constraint (`mut`, `seeds`, `has_one`,
//! `token::mint`, `token::authority`) — this twin answers the same
//! anchor-lang 0.32.1 `ErrorCode`, and every failure is logged the way
//! Anchor logs it, so `AnchorError.parse` / `translateError` of
//! `@coral-xyz/anchor` name it:
//!
//! `AnchorError occurred. Error Code: <Name>. Error Number: <n>. Error Message: <msg>.`
//! `AnchorError caused by account: <account>. Error Code: …` (account types and
//! constraints that name their field)
//! `ProgramError caused by account: <account>. Error Code: …` (a
//! `ProgramError` such as `InvalidAccountData` from token account unpacking)
//!
//! The log line is built only on the failure path (`Failure::log`, `#[cold]`,
//! static strings into a stack buffer): a successful instruction pays nothing
//! for it.

use {
    crate::error::{error_table, OncepayError},
    pinocchio::program_error::ProgramError,
};

error_table! {
    /// The anchor-lang 0.32.1 framework errors (`anchor_lang::error::ErrorCode`)
    /// this program answers, with Anchor's numbers. Names and messages are
    /// Anchor's, byte for byte. (No `From<…> for ProgramError`: they are
    /// answered through [`Failure`], which logs them the way Anchor does.)
    pub enum AnchorErrorCode {
        /// 101 - no instruction starts with the given data (also: under 8 bytes).
        InstructionFallbackNotFound = 101, "Fallback functions are not supported",
        /// 102 - the arguments do not Borsh-decode.
        InstructionDidNotDeserialize = 102, "The program could not deserialize the given instruction",
        /// 1000 - an Anchor IDL instruction (the Anchor program is built with `no-idl`).
        IdlInstructionStub = 1000, "The program was compiled without idl instructions",
        /// 2000 - a `mut` account is read-only.
        ConstraintMut = 2000, "A mut constraint was violated",
        /// 2001 - a `has_one` field does not name the given account.
        ConstraintHasOne = 2001, "A has one constraint was violated",
        /// 2006 - the account is not the PDA of its `seeds`.
        ConstraintSeeds = 2006, "A seeds constraint was violated",
        /// 2014 - `token::mint`.
        ConstraintTokenMint = 2014, "A token mint constraint was violated",
        /// 2015 - `token::authority`.
        ConstraintTokenOwner = 2015, "A token owner constraint was violated",
        /// 2021 - `token::token_program`.
        ConstraintTokenTokenProgram = 2021, "A token account token program constraint was violated",
        /// 2022 - `mint::token_program`.
        ConstraintMintTokenProgram = 2022, "A mint token program constraint was violated",
        /// 3001 - account data shorter than a discriminator.
        AccountDiscriminatorNotFound = 3001, "No discriminator was found on the account",
        /// 3002 - wrong account discriminator.
        AccountDiscriminatorMismatch = 3002, "Account discriminator did not match what was expected",
        /// 3003 - account fields do not Borsh-decode.
        AccountDidNotDeserialize = 3003, "Failed to deserialize the account",
        /// 3005 - fewer accounts than the instruction declares.
        AccountNotEnoughKeys = 3005, "Not enough account keys given to the instruction",
        /// 3007 - account owned by another program.
        AccountOwnedByWrongProgram = 3007, "The given account is owned by a different program than expected",
        /// 3008 - a `Program` / `Interface` account is not the expected program.
        InvalidProgramId = 3008, "Program ID was not as expected",
        /// 3009 - a `Program` / `Interface` account is not executable.
        InvalidProgramExecutable = 3009, "Program account is not executable",
        /// 3010 - a `Signer` did not sign.
        AccountNotSigner = 3010, "The given account did not sign",
        /// 3012 - a typed account is a System account with no lamports.
        AccountNotInitialized = 3012, "The program expected this account to be already initialized",
    }
}

/// What failed: a program error (6000…), an Anchor framework error, or a
/// runtime `ProgramError` (token account unpacking, sysvars).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Program(OncepayError),
    Anchor(AnchorErrorCode),
    Runtime(RuntimeError),
}

/// The `ProgramError`s this program returns itself, with the name and message
/// Anchor logs for them (`{:?}` and `Display` of solana-program-error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeError {
    InvalidAccountData,
    UninitializedAccount,
    AccountDataTooSmall,
    UnsupportedSysvar,
}

impl RuntimeError {
    const fn name(self) -> &'static str {
        match self {
            Self::InvalidAccountData => "InvalidAccountData",
            Self::UninitializedAccount => "UninitializedAccount",
            Self::AccountDataTooSmall => "AccountDataTooSmall",
            Self::UnsupportedSysvar => "UnsupportedSysvar",
        }
    }

    const fn message(self) -> &'static str {
        match self {
            Self::InvalidAccountData => "An account's data contents was invalid",
            Self::UninitializedAccount => "An account's data was not initialized",
            Self::AccountDataTooSmall => "An account's data was too small",
            Self::UnsupportedSysvar => "Unsupported sysvar",
        }
    }

    pub const fn program_error(self) -> ProgramError {
        match self {
            Self::InvalidAccountData => ProgramError::InvalidAccountData,
            Self::UninitializedAccount => ProgramError::UninitializedAccount,
            Self::AccountDataTooSmall => ProgramError::AccountDataTooSmall,
            Self::UnsupportedSysvar => ProgramError::UnsupportedSysvar,
        }
    }
}

/// A failed instruction: what failed and, where Anchor names it, the account
/// (the field name in the Anchor program's `#[derive(Accounts)]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: Kind,
    pub account: Option<&'static str>,
}

impl Failure {
    /// The same failure, caused by `account`.
    #[inline(always)]
    pub const fn at(self, account: &'static str) -> Self {
        Self {
            kind: self.kind,
            account: Some(account),
        }
    }

    /// The error number clients see: the custom code, or the runtime
    /// `ProgramError`'s u64 encoding.
    pub fn number(&self) -> u64 {
        match self.kind {
            Kind::Program(e) => e as u64,
            Kind::Anchor(e) => e as u64,
            Kind::Runtime(e) => u64::from(e.program_error()),
        }
    }

    /// Writes Anchor's log line for this failure into `out`; returns its
    /// length (truncated at the buffer's end, never past it).
    pub fn write_log_line(&self, out: &mut [u8]) -> usize {
        let (prefix, name, message) = match self.kind {
            Kind::Program(e) => ("AnchorError", e.name(), e.message()),
            Kind::Anchor(e) => ("AnchorError", e.name(), e.message()),
            Kind::Runtime(e) => ("ProgramError", e.name(), e.message()),
        };
        let mut w = Writer { out, len: 0 };
        w.str(prefix);
        match self.account {
            Some(account) => {
                w.str(" caused by account: ");
                w.str(account);
            }
            None => w.str(" occurred"),
        }
        w.str(". Error Code: ");
        w.str(name);
        w.str(". Error Number: ");
        w.u64(self.number());
        w.str(". Error Message: ");
        w.str(message);
        w.str(".");
        w.len
    }

    /// Logs the failure as Anchor does (failure path only).
    #[cold]
    #[inline(never)]
    pub fn log(&self) {
        let mut line = [0u8; 256];
        let len = self.write_log_line(&mut line);
        // Every piece is valid UTF-8 (static ASCII strings and digits), and
        // the writer only stops at a piece boundary.
        if let Ok(text) = core::str::from_utf8(&line[..len]) {
            pinocchio::log::sol_log(text);
        }
    }
}

/// Appends whole pieces to a fixed buffer; a piece that does not fit is
/// dropped (so the text stays valid UTF-8).
struct Writer<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Writer<'_> {
    fn str(&mut self, s: &str) {
        let end = match self.len.checked_add(s.len()) {
            Some(end) if end <= self.out.len() => end,
            _ => return,
        };
        if let Some(dst) = self.out.get_mut(self.len..end) {
            dst.copy_from_slice(s.as_bytes());
            self.len = end;
        }
    }

    fn u64(&mut self, mut v: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        if let Ok(s) = core::str::from_utf8(&digits[i..]) {
            self.str(s);
        }
    }
}

impl From<OncepayError> for Failure {
    #[inline(always)]
    fn from(e: OncepayError) -> Self {
        Self {
            kind: Kind::Program(e),
            account: None,
        }
    }
}

impl From<AnchorErrorCode> for Failure {
    #[inline(always)]
    fn from(e: AnchorErrorCode) -> Self {
        Self {
            kind: Kind::Anchor(e),
            account: None,
        }
    }
}

impl From<RuntimeError> for Failure {
    #[inline(always)]
    fn from(e: RuntimeError) -> Self {
        Self {
            kind: Kind::Runtime(e),
            account: None,
        }
    }
}

impl From<Failure> for ProgramError {
    #[inline(always)]
    fn from(f: Failure) -> Self {
        match f.kind {
            Kind::Program(e) => ProgramError::Custom(e as u32),
            Kind::Anchor(e) => ProgramError::Custom(e as u32),
            Kind::Runtime(e) => e.program_error(),
        }
    }
}

/// The result of every processor.
pub type Result<T = ()> = core::result::Result<T, Failure>;

#[cfg(test)]
mod tests {
    use super::*;

    fn line(f: Failure) -> std::string::String {
        let mut buf = [0u8; 256];
        let n = f.write_log_line(&mut buf);
        std::string::String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    fn logs_like_anchor() {
        assert_eq!(
            line(OncepayError::OperationAlreadyConsumed.into()),
            "AnchorError occurred. Error Code: OperationAlreadyConsumed. Error Number: 6000. \
             Error Message: Operation already consumed: this op_id was paid out before."
        );
        assert_eq!(
            line(Failure::from(AnchorErrorCode::AccountNotSigner).at("payout_authority")),
            "AnchorError caused by account: payout_authority. Error Code: AccountNotSigner. \
             Error Number: 3010. Error Message: The given account did not sign."
        );
        assert_eq!(
            line(Failure::from(RuntimeError::InvalidAccountData).at("vault")),
            "ProgramError caused by account: vault. Error Code: InvalidAccountData. \
             Error Number: 17179869184. Error Message: An account's data contents was invalid."
        );
    }

    #[test]
    fn numbers_are_anchors() {
        assert_eq!(AnchorErrorCode::InstructionFallbackNotFound as u32, 101);
        assert_eq!(AnchorErrorCode::IdlInstructionStub as u32, 1000);
        assert_eq!(AnchorErrorCode::ConstraintMut as u32, 2000);
        assert_eq!(AnchorErrorCode::ConstraintSeeds as u32, 2006);
        assert_eq!(AnchorErrorCode::ConstraintTokenMint as u32, 2014);
        assert_eq!(AnchorErrorCode::ConstraintTokenTokenProgram as u32, 2021);
        assert_eq!(AnchorErrorCode::AccountNotEnoughKeys as u32, 3005);
        assert_eq!(AnchorErrorCode::AccountOwnedByWrongProgram as u32, 3007);
        assert_eq!(AnchorErrorCode::AccountNotSigner as u32, 3010);
        assert_eq!(AnchorErrorCode::AccountNotInitialized as u32, 3012);
        assert_eq!(
            ProgramError::from(Failure::from(AnchorErrorCode::ConstraintMut)),
            ProgramError::Custom(2000)
        );
    }

    #[test]
    fn a_long_line_is_cut_at_a_piece_boundary() {
        let mut buf = [0u8; 40];
        let n = Failure::from(AnchorErrorCode::AccountNotSigner)
            .at("payout_authority")
            .write_log_line(&mut buf);
        assert!(core::str::from_utf8(&buf[..n]).is_ok());
        assert!(n <= 40);
    }
}
