//! A test program that calls the oncepay payout program by CPI
//! (tests/programs/cpi.test.ts): what another on-chain program can and cannot
//! make `execute_payout` do. Test code, never deployed anywhere else.
//!
//! ### Accounts
//! - 0: the payout program (either binary, at oncepay's program id);
//! - 1 to 9: `execute_payout`'s nine accounts, in its order, forwarded as
//!   given.
//!
//! ### Data
//! `[0]` mode, `[1]` bump of this program's authority PDA `["authority"]`
//! (mode 2 only), `[2..]` the `execute_payout` instruction data, forwarded.
//!
//! ### Modes
//!   0. forward: one CPI, each account's signer and writable flags as this
//!      program received them;
//!   1. forward twice: the same CPI two times in this one instruction;
//!   2. sign as authority: account 1 (`payout_authority`) is this program's
//!      PDA `["authority"]`, and the CPI is signed with its seeds;
//!   3. claim a signature: account 1 is marked signer in the CPI without
//!      anyone's signature (the runtime must refuse).

use pinocchio::{
    account_info::AccountInfo,
    cpi::slice_invoke_signed,
    instruction::{AccountMeta, Instruction, Seed, Signer},
    program_error::ProgramError,
    pubkey::Pubkey,
    ProgramResult,
};

/// `execute_payout`'s account count.
const PAYOUT_ACCOUNTS: usize = 9;
/// Seed of this program's authority PDA.
pub const AUTHORITY_SEED: &[u8] = b"authority";

pub const FORWARD: u8 = 0;
pub const FORWARD_TWICE: u8 = 1;
pub const SIGN_AS_AUTHORITY: u8 = 2;
pub const CLAIM_SIGNATURE: u8 = 3;

// A std program (the toolchain builds std for SBF): pinocchio's entrypoint,
// its bump allocator and its panic hook, nothing hand-written.
#[cfg(feature = "bpf-entrypoint")]
pinocchio::entrypoint!(process_instruction, 10);

pub fn process_instruction(
    _program_id: &Pubkey,
    accounts: &[AccountInfo],
    data: &[u8],
) -> ProgramResult {
    let [mode, bump, payout_data @ ..] = data else {
        return Err(ProgramError::InvalidInstructionData);
    };
    let [payout_program, forwarded @ ..] = accounts else {
        return Err(ProgramError::NotEnoughAccountKeys);
    };
    if forwarded.len() != PAYOUT_ACCOUNTS {
        return Err(ProgramError::NotEnoughAccountKeys);
    }
    let infos: [&AccountInfo; PAYOUT_ACCOUNTS] = core::array::from_fn(|i| &forwarded[i]);
    let metas: [AccountMeta; PAYOUT_ACCOUNTS] = core::array::from_fn(|i| {
        let account = infos[i];
        // Account 0 of execute_payout is its payout authority.
        let claim = i == 0 && (*mode == SIGN_AS_AUTHORITY || *mode == CLAIM_SIGNATURE);
        AccountMeta::new(
            account.key(),
            account.is_writable(),
            account.is_signer() || claim,
        )
    });
    let ix = Instruction {
        program_id: payout_program.key(),
        accounts: &metas,
        data: payout_data,
    };
    let bump_seed = [*bump];
    let seeds = [Seed::from(AUTHORITY_SEED), Seed::from(&bump_seed)];
    let signer = [Signer::from(&seeds)];
    match *mode {
        FORWARD | CLAIM_SIGNATURE => slice_invoke_signed(&ix, &infos, &[]),
        FORWARD_TWICE => {
            slice_invoke_signed(&ix, &infos, &[])?;
            slice_invoke_signed(&ix, &infos, &[])
        }
        SIGN_AS_AUTHORITY => slice_invoke_signed(&ix, &infos, &signer),
        _ => Err(ProgramError::InvalidInstructionData),
    }
}
