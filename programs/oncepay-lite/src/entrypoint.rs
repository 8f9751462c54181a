//! Program entrypoint: dispatch on the 8-byte Anchor discriminator, hot
//! instruction first.

use {
    crate::{error::OncepayError, instructions::*},
    pinocchio::{
        account_info::AccountInfo, no_allocator, program_entrypoint, pubkey::Pubkey, ProgramResult,
    },
};

#[cfg(feature = "logging")]
use pinocchio::program_error::ProgramError;

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
    let result = dispatch(program_id, accounts, instruction_data);
    #[cfg(feature = "logging")]
    if let Err(error) = &result {
        log_error(error);
    }
    result
}

#[inline(always)]
fn dispatch(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    let Some((discriminator, args)) = data.split_first_chunk::<8>() else {
        return Err(OncepayError::InvalidInstructionData.into());
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
        _ => Err(OncepayError::InvalidInstructionData.into()),
    }
}

/// Logs the name of a program error (only with the `logging` feature).
#[cfg(feature = "logging")]
#[cold]
fn log_error(error: &ProgramError) {
    if let ProgramError::Custom(code) = error {
        if let Some(e) = OncepayError::ALL.get(code.wrapping_sub(6000) as usize) {
            pinocchio::log::sol_log(e.name());
            return;
        }
    }
    pinocchio::log::sol_log("Error: not an oncepay error");
}

#[cfg(test)]
mod tests {
    use {super::*, pinocchio::program_error::ProgramError};

    fn code(r: ProgramResult) -> Option<u32> {
        match r {
            Err(ProgramError::Custom(c)) => Some(c),
            _ => None,
        }
    }

    #[test]
    fn dispatch_names_bad_data_and_missing_accounts() {
        let id = crate::ID;
        let invalid_data = Some(OncepayError::InvalidInstructionData as u32);
        assert_eq!(code(dispatch(&id, &[], &[])), invalid_data);
        assert_eq!(code(dispatch(&id, &[], &EXECUTE_PAYOUT[..7])), invalid_data);
        assert_eq!(code(dispatch(&id, &[], &[0u8; 8])), invalid_data);
        let missing = Some(OncepayError::NotEnoughAccountKeys as u32);
        for disc in [
            EXECUTE_PAYOUT,
            INITIALIZE_MERCHANT,
            SET_PAUSED,
            SET_PAYOUT_AUTHORITY,
        ] {
            assert_eq!(code(dispatch(&id, &[], &disc)), missing);
        }
    }
}
