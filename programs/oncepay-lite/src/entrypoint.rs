//! Program entrypoint: dispatch on the 8-byte Anchor discriminator, hot
//! instruction first.

use {
    crate::{
        anchor_error::{AnchorErrorCode, Result},
        instructions::*,
    },
    pinocchio::{
        account_info::AccountInfo, no_allocator, program_entrypoint, pubkey::Pubkey, ProgramResult,
    },
};

// Nine accounts is the most any instruction takes; extra ones are ignored.
program_entrypoint!(process_instruction, 9);
no_allocator!();

/// Panic handler (not pinocchio's `nostd_panic_handler!`: its
/// `#[no_mangle]` on a lang item is rejected by newer rustc). Logs the
/// location and aborts; nothing in the program is expected to panic.
#[cfg(target_os = "solana")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    if let Some(location) = info.location() {
        // SAFETY: pointer and length come from a live `&str`; the syscall
        // never returns.
        unsafe {
            pinocchio::syscalls::sol_panic_(
                location.file().as_ptr(),
                location.file().len() as u64,
                location.line() as u64,
                location.column() as u64,
            )
        }
    }
    // SAFETY: `abort` takes no arguments and never returns.
    unsafe { pinocchio::syscalls::abort() }
}

#[inline(always)]
pub fn process_instruction(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    instruction_data: &[u8],
) -> ProgramResult {
    dispatch(program_id, accounts, instruction_data).map_err(|failure| {
        // Anchor's log line, on the failure path only (`Failure::log` is cold).
        failure.log();
        failure.into()
    })
}

/// Anchor's dispatch: the first instruction whose discriminator starts the
/// data; none (or fewer than 8 bytes) → `InstructionFallbackNotFound`.
#[inline(always)]
fn dispatch(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> Result {
    let Some((discriminator, args)) = data.split_first_chunk::<8>() else {
        return Err(AnchorErrorCode::InstructionFallbackNotFound.into());
    };
    match *discriminator {
        // execute_payout
        EXECUTE_PAYOUT => process_execute_payout(program_id, accounts, args),
        // initialize_merchant
        INITIALIZE_MERCHANT => process_initialize_merchant(program_id, accounts, args),
        // set_payout_authority
        SET_PAYOUT_AUTHORITY => process_set_payout_authority(program_id, accounts, args),
        // set_paused
        SET_PAUSED => process_set_paused(program_id, accounts, args),
        // Anchor's IDL instructions, which the Anchor program is built without
        // (`no-idl`): it answers them with this stub error, after its own four.
        IDL_IX_TAG => Err(AnchorErrorCode::IdlInstructionStub.into()),
        _ => Err(AnchorErrorCode::InstructionFallbackNotFound.into()),
    }
}

#[cfg(test)]
mod tests {
    use {super::*, crate::anchor_error::Kind};

    fn kind(r: Result) -> Option<Kind> {
        r.err().map(|f| f.kind)
    }

    #[test]
    fn dispatch_names_unknown_instructions_and_missing_accounts() {
        let id = crate::ID;
        let fallback = Some(Kind::Anchor(AnchorErrorCode::InstructionFallbackNotFound));
        assert_eq!(kind(dispatch(&id, &[], &[])), fallback);
        assert_eq!(kind(dispatch(&id, &[], &EXECUTE_PAYOUT[..7])), fallback);
        assert_eq!(kind(dispatch(&id, &[], &[0u8; 8])), fallback);
        // Anchor's IDL tag, whatever follows (an IdlInstruction), before any account is read.
        let stub = Some(Kind::Anchor(AnchorErrorCode::IdlInstructionStub));
        assert_eq!(kind(dispatch(&id, &[], &IDL_IX_TAG)), stub);
        assert_eq!(
            kind(dispatch(&id, &[], &[IDL_IX_TAG, [0; 8]].concat())),
            stub
        );
        let mut reversed = crate::discriminator::discriminator(b"anchor:idl");
        reversed.reverse();
        assert_eq!(IDL_IX_TAG, reversed);
        // Arguments are decoded before accounts are taken, as Anchor does.
        let short = Some(Kind::Anchor(AnchorErrorCode::InstructionDidNotDeserialize));
        assert_eq!(kind(dispatch(&id, &[], &EXECUTE_PAYOUT)), short);
        let missing = Some(Kind::Anchor(AnchorErrorCode::AccountNotEnoughKeys));
        let with_args = |disc: [u8; 8], n: usize| {
            let mut d = [0u8; 8 + 41];
            d[..8].copy_from_slice(&disc);
            kind(dispatch(&id, &[], &d[..8 + n]))
        };
        assert_eq!(with_args(EXECUTE_PAYOUT, 41), missing);
        assert_eq!(with_args(INITIALIZE_MERCHANT, 33), missing);
        assert_eq!(with_args(SET_PAUSED, 1), missing);
        assert_eq!(with_args(SET_PAYOUT_AUTHORITY, 32), missing);
    }
}
