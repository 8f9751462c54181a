//! Instructions: one file each, one `process_<ix>` each. Anchor
//! discriminators (`sha256("global:<ix>")[..8]`) and Borsh little-endian
//! arguments.
//!
//! Every instruction checks in the order the Anchor program's generated code
//! does, and answers what it answers (`anchor_error.rs`):
//!   1. the arguments decode (Borsh from a slice: trailing bytes are ignored)
//!      → `InstructionDidNotDeserialize`;
//!   2. each account's type, in field order (`Signer`, `Account<T>`,
//!      `InterfaceAccount<T>`, `Interface`, `Program`), a missing account →
//!      `AccountNotEnoughKeys`;
//!   3. each field's constraints, in field order (`seeds`, `mut`, `has_one`,
//!      raw `constraint`s, then `token::…`);
//!   4. the handler's own rules.
//!
//! The helpers below are those account types and constraints.

pub mod execute_payout;
pub mod initialize_merchant;
pub mod set_paused;
pub mod set_payout_authority;

pub use {
    execute_payout::process_execute_payout, initialize_merchant::process_initialize_merchant,
    set_paused::process_set_paused, set_payout_authority::process_set_payout_authority,
};

use {
    crate::{
        address::{SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM},
        anchor_error::{AnchorErrorCode, Failure, Result, RuntimeError},
        discriminator::discriminator,
        keys::{keys_eq, owned_by, read_u64},
        state::{Layout, Merchant},
        token,
    },
    pinocchio::{
        account_info::{AccountInfo, RefMut},
        pubkey::Pubkey,
    },
};

/// `global:execute_payout`.
pub const EXECUTE_PAYOUT: [u8; 8] = discriminator(b"global:execute_payout");
/// `global:initialize_merchant`.
pub const INITIALIZE_MERCHANT: [u8; 8] = discriminator(b"global:initialize_merchant");
/// `global:set_payout_authority`.
pub const SET_PAYOUT_AUTHORITY: [u8; 8] = discriminator(b"global:set_payout_authority");
/// `global:set_paused`.
pub const SET_PAUSED: [u8; 8] = discriminator(b"global:set_paused");
/// The first 8 bytes of every Anchor IDL instruction: anchor-lang's
/// `IDL_IX_TAG_LE` (its `IDL_IX_TAG` is `sha256("anchor:idl")[..8]` read as a
/// big-endian u64, so the bytes are that prefix reversed). The Anchor program
/// is built with `no-idl` and answers it `IdlInstructionStub`; so does this one.
pub const IDL_IX_TAG: [u8; 8] = 0x0a69_e9a7_78bc_f440_u64.to_le_bytes();

/// The account at `index`, or `AccountNotEnoughKeys` (Anchor takes the
/// accounts one field at a time, so the fields before a missing one are
/// checked first).
#[inline(always)]
pub(crate) fn account(accounts: &[AccountInfo], index: usize) -> Result<&AccountInfo> {
    accounts
        .get(index)
        .ok_or(Failure::from(AnchorErrorCode::AccountNotEnoughKeys))
}

/// `Signer<'info>`: did sign, else `AccountNotSigner` at `name`.
#[inline(always)]
pub(crate) fn signer(account: &AccountInfo, name: &'static str) -> Result {
    if account.is_signer() {
        Ok(())
    } else {
        Err(Failure::from(AnchorErrorCode::AccountNotSigner).at(name))
    }
}

/// `#[account(mut)]`: writable, else `ConstraintMut` at `name`.
#[inline(always)]
pub(crate) fn mutable(account: &AccountInfo, name: &'static str) -> Result {
    if account.is_writable() {
        Ok(())
    } else {
        Err(Failure::from(AnchorErrorCode::ConstraintMut).at(name))
    }
}

/// The owner check of a typed Anchor account (`Account`, `InterfaceAccount`)
/// failed: a System account with no lamports is `AccountNotInitialized`
/// (Anchor's first check), anything else `AccountOwnedByWrongProgram`.
#[cold]
fn wrong_owner(account: &AccountInfo, name: &'static str) -> Failure {
    let code = if account.lamports() == 0 && owned_by(account, &SYSTEM_PROGRAM.0) {
        AnchorErrorCode::AccountNotInitialized
    } else {
        AnchorErrorCode::AccountOwnedByWrongProgram
    };
    Failure::from(code).at(name)
}

/// `Account<'info, T>` of this program: initialised, owned by `program_id`
/// (`AccountOwnedByWrongProgram`), a discriminator (`AccountDiscriminatorNotFound`)
/// that is `T`'s (`AccountDiscriminatorMismatch`), and fields that Borsh-decode
/// (`AccountDidNotDeserialize`; Borsh reads a prefix, so longer data is
/// accepted, as Anchor does).
///
/// # Safety
/// No mutable borrow of the account's data may be alive while the returned
/// reference is used.
#[inline(always)]
pub(crate) unsafe fn program_account<'a, T: Layout>(
    account: &'a AccountInfo,
    program_id: &Pubkey,
    name: &'static str,
) -> Result<&'a T> {
    // Owned by us is never "not initialized", so that check waits for a
    // failure (same answer, cheaper success).
    if !owned_by(account, program_id) {
        return Err(wrong_owner(account, name));
    }
    // SAFETY: the caller guarantees no mutable borrow is alive.
    let data = unsafe { account.borrow_data_unchecked() };
    let code = match data.first_chunk::<8>() {
        None => AnchorErrorCode::AccountDiscriminatorNotFound,
        Some(d) if read_u64(d) != u64::from_le_bytes(T::DISCRIMINATOR) => {
            AnchorErrorCode::AccountDiscriminatorMismatch
        }
        Some(_) => match data.get(..T::LEN).and_then(T::from_bytes) {
            Some(view) if view.borsh_valid() => return Ok(view),
            _ => AnchorErrorCode::AccountDidNotDeserialize,
        },
    };
    Err(Failure::from(code).at(name))
}

/// The `ProgramError` of a token layout that does not unpack, at `name`.
#[inline(always)]
fn unpack_failure(e: token::UnpackError, name: &'static str) -> Failure {
    let runtime = match e {
        token::UnpackError::Invalid => RuntimeError::InvalidAccountData,
        token::UnpackError::Uninitialized => RuntimeError::UninitializedAccount,
    };
    Failure::from(runtime).at(name)
}

/// Which token program a key is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenProgram {
    Token,
    Token2022,
}

/// SPL Token or Token-2022 (anchor-spl's `TokenAccount::owners()` /
/// `TokenInterface::ids()`), or neither.
#[inline(always)]
fn token_program_of(key: &Pubkey) -> Option<TokenProgram> {
    if keys_eq(key, &TOKEN_PROGRAM.0) {
        Some(TokenProgram::Token)
    } else if keys_eq(key, &TOKEN_2022_PROGRAM.0) {
        Some(TokenProgram::Token2022)
    } else {
        None
    }
}

/// `InterfaceAccount<'info, TokenAccount>`: owned by a token program (else
/// `AccountNotInitialized` / `AccountOwnedByWrongProgram`), and a token
/// account that unpacks (the `ProgramError` anchor-spl's unpacking returns).
/// Returns the view and which token program owns it (for the
/// `token::token_program` constraint).
///
/// # Safety
/// No mutable borrow of the account's data may be alive while the returned
/// view is used.
#[inline(always)]
pub(crate) unsafe fn token_account<'a>(
    account: &'a AccountInfo,
    name: &'static str,
) -> Result<(token::TokenAccount<'a>, TokenProgram)> {
    let owner = token_program_of(account.owner()).ok_or_else(|| wrong_owner(account, name))?;
    // SAFETY: the caller guarantees no mutable borrow is alive.
    let view = token::token_account(unsafe { account.borrow_data_unchecked() })
        .map_err(|e| unpack_failure(e, name))?;
    Ok((view, owner))
}

/// `InterfaceAccount<'info, Mint>`: as [`token_account`], for a mint; returns
/// its decimals and owner.
///
/// # Safety
/// No mutable borrow of the account's data may be alive during the call.
#[inline(always)]
pub(crate) unsafe fn mint_account(
    account: &AccountInfo,
    name: &'static str,
) -> Result<(u8, TokenProgram)> {
    let owner = token_program_of(account.owner()).ok_or_else(|| wrong_owner(account, name))?;
    // SAFETY: the caller guarantees no mutable borrow is alive.
    let decimals = token::mint_decimals(unsafe { account.borrow_data_unchecked() })
        .map_err(|e| unpack_failure(e, name))?;
    Ok((decimals, owner))
}

/// `Interface<'info, TokenInterface>`: SPL Token or Token-2022
/// (`InvalidProgramId`), executable (`InvalidProgramExecutable`).
#[inline(always)]
pub(crate) fn token_program_account(
    account: &AccountInfo,
    name: &'static str,
) -> Result<TokenProgram> {
    let program = token_program_of(account.key())
        .ok_or(Failure::from(AnchorErrorCode::InvalidProgramId).at(name))?;
    executable(account, name)?;
    Ok(program)
}

/// `Program<'info, System>`: the System program (`InvalidProgramId`),
/// executable (`InvalidProgramExecutable`).
#[inline(always)]
pub(crate) fn system_program_account(account: &AccountInfo, name: &'static str) -> Result {
    if !keys_eq(account.key(), &SYSTEM_PROGRAM.0) {
        return Err(Failure::from(AnchorErrorCode::InvalidProgramId).at(name));
    }
    executable(account, name)
}

#[inline(always)]
fn executable(account: &AccountInfo, name: &'static str) -> Result {
    if account.executable() {
        Ok(())
    } else {
        Err(Failure::from(AnchorErrorCode::InvalidProgramExecutable).at(name))
    }
}

/// `token::token_program = token_program` / `mint::token_program =
/// token_program`: the account's owner (found by its type check) is the given
/// token program, else `code` (Anchor names no account for these).
#[inline(always)]
pub(crate) fn owned_by_token_program(
    owner: TokenProgram,
    token_program: TokenProgram,
    code: AnchorErrorCode,
) -> Result {
    if owner == token_program {
        Ok(())
    } else {
        Err(code.into())
    }
}

/// The Anchor program's `UpdateMerchant` accounts (`set_paused`,
/// `set_payout_authority`), in its order: merchant_authority `Signer` (3010)
/// → merchant `Account<Merchant>` (3012, 3007, 3001, 3002, 3003) → merchant
/// `mut` (2000) → `has_one = merchant_authority` (`Unauthorized` 6001). The
/// merchant's `seeds` constraint cannot fail for a `Merchant` of this program
/// (only `initialize_merchant` creates one, at the PDA of its stored
/// authority and bump), so it is not recomputed. Returns the config borrowed
/// mutably.
#[inline(always)]
pub(crate) fn load_merchant_as_authority<'a>(
    program_id: &Pubkey,
    accounts: &'a [AccountInfo],
) -> Result<RefMut<'a, Merchant>> {
    let merchant_authority = account(accounts, 0)?;
    signer(merchant_authority, "merchant_authority")?;
    let merchant = account(accounts, 1)?;
    // SAFETY: this view is dropped before the mutable borrow below.
    let config = unsafe { program_account::<Merchant>(merchant, program_id, "merchant")? };
    mutable(merchant, "merchant")?;
    if !keys_eq(config.merchant_authority(), merchant_authority.key()) {
        return Err(Failure::from(crate::error::OncepayError::Unauthorized).at("merchant"));
    }
    let data = merchant
        .try_borrow_mut_data()
        .map_err(|_| Failure::from(RuntimeError::AccountDataTooSmall))?;
    RefMut::filter_map(data, |d| {
        d.get_mut(..Merchant::LEN)
            .and_then(Merchant::from_bytes_mut_unchecked)
    })
    .map_err(|_| Failure::from(RuntimeError::AccountDataTooSmall))
}

/// The argument bytes after the discriminator, read as Borsh does: fixed-size
/// fields from the front of the slice; too few bytes is
/// `InstructionDidNotDeserialize`, extra bytes are ignored.
pub(crate) struct Args<'a> {
    data: &'a [u8],
}

impl<'a> Args<'a> {
    #[inline(always)]
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// The next `N` bytes.
    #[inline(always)]
    pub(crate) fn bytes<const N: usize>(&mut self) -> Result<&'a [u8; N]> {
        let Some((head, rest)) = self.data.split_first_chunk::<N>() else {
            return Err(AnchorErrorCode::InstructionDidNotDeserialize.into());
        };
        self.data = rest;
        Ok(head)
    }

    #[inline(always)]
    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes::<1>()?[0])
    }

    #[inline(always)]
    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(*self.bytes::<8>()?))
    }

    /// Borsh `bool`: exactly 0 or 1.
    #[inline(always)]
    pub(crate) fn bool(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(AnchorErrorCode::InstructionDidNotDeserialize.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use {super::*, crate::anchor_error::Kind};

    fn code(r: Result<impl Sized>) -> Option<Kind> {
        r.err().map(|f| f.kind)
    }

    #[test]
    fn args_read_a_prefix_like_borsh() {
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 1, 7];
        let mut a = Args::new(&data);
        assert_eq!(
            a.u64().unwrap(),
            u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8])
        );
        assert_eq!(a.u8().unwrap(), 9);
        assert!(a.bool().unwrap());
        // One byte (7) left over: ignored, as Borsh from a slice does.
        let short = Kind::Anchor(AnchorErrorCode::InstructionDidNotDeserialize);
        assert_eq!(code(Args::new(&[1, 2]).u64()), Some(short));
        assert_eq!(code(Args::new(&[2]).bool()), Some(short));
        assert_eq!(code(Args::new(&[]).bytes::<32>()), Some(short));
    }
}
