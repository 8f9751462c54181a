//! The two CPIs of every payout, with their instructions built by hand.
//!
//! `anchor_lang::system_program::create_account` and
//! `anchor_spl::token_interface::transfer_checked` build the same instructions
//! through the System program's bincode encoding and Token-2022's instruction
//! packer; here the bytes are written directly (the host tests compare them
//! with those builders). The account infos passed are the instruction's
//! accounts, as Anchor's helpers pass them (the callee program is found by its
//! id). The rare paths (a pre-funded op account, `initialize_merchant`) keep
//! Anchor's helpers (program_account.rs).
//!
//! `invoke_signed_unchecked`, not `invoke_signed`: the latter first tries to
//! borrow every passed account's lamports and data (mutably for writable
//! ones) so that the runtime's write-back cannot alias a live `Ref`/`RefMut`:
//! ~10 key comparisons and 2 borrows per account. Note: no borrow is live at
//! either call: `InterfaceAccount` and `Account<Merchant>` hold decoded
//! copies, not borrows, and the handler borrows the op account's data only
//! after both CPIs (to write the record). Keep these calls before any
//! `try_borrow_*` of the accounts they pass that outlives them.

use anchor_lang::{
    prelude::*,
    solana_program::{
        instruction::{AccountMeta, Instruction},
        program::invoke_signed_unchecked,
    },
};

/// `SystemInstruction::CreateAccount` (u32 LE 0), then lamports, space, owner.
const CREATE_ACCOUNT: u32 = 0;
/// `TokenInstruction::TransferChecked`, then amount (u64 LE) and decimals.
const TRANSFER_CHECKED: u8 = 12;

/// `SystemInstruction::CreateAccount { lamports, space, owner }` from `from` to
/// `to` (both signers).
pub fn create_account_ix(
    from: &Pubkey,
    to: &Pubkey,
    lamports: u64,
    space: u64,
    owner: &Pubkey,
) -> Instruction {
    let mut data = [0u8; 52];
    data[..4].copy_from_slice(&CREATE_ACCOUNT.to_le_bytes());
    data[4..12].copy_from_slice(&lamports.to_le_bytes());
    data[12..20].copy_from_slice(&space.to_le_bytes());
    data[20..].copy_from_slice(owner.as_ref());
    Instruction {
        program_id: anchor_lang::system_program::ID,
        accounts: vec![AccountMeta::new(*from, true), AccountMeta::new(*to, true)],
        data: data.to_vec(),
    }
}

/// `TransferChecked { amount, decimals }` of SPL Token or Token-2022
/// (`token_program`), signed by `authority` alone.
pub fn transfer_checked_ix(
    token_program: &Pubkey,
    from: &Pubkey,
    mint: &Pubkey,
    to: &Pubkey,
    authority: &Pubkey,
    amount: u64,
    decimals: u8,
) -> Instruction {
    let mut data = [0u8; 10];
    data[0] = TRANSFER_CHECKED;
    data[1..9].copy_from_slice(&amount.to_le_bytes());
    data[9] = decimals;
    Instruction {
        program_id: *token_program,
        accounts: vec![
            AccountMeta::new(*from, false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new(*to, false),
            AccountMeta::new_readonly(*authority, true),
        ],
        data: data.to_vec(),
    }
}

/// Creates `to` (no lamports yet) with `space` bytes owned by `owner`, funded
/// by `from`; `signer_seeds` sign for `to`.
pub fn create_account<'info>(
    from: &AccountInfo<'info>,
    to: &AccountInfo<'info>,
    lamports: u64,
    space: u64,
    owner: &Pubkey,
    signer_seeds: &[&[&[u8]]],
) -> Result<()> {
    let ix = create_account_ix(from.key, to.key, lamports, space, owner);
    invoke_signed_unchecked(&ix, &[from.clone(), to.clone()], signer_seeds).map_err(Into::into)
}

/// Moves `amount` from `from` to `to` with the token program's
/// `TransferChecked`; `signer_seeds` sign for `authority`.
#[allow(clippy::too_many_arguments)]
pub fn transfer_checked<'info>(
    token_program: &Pubkey,
    from: &AccountInfo<'info>,
    mint: &AccountInfo<'info>,
    to: &AccountInfo<'info>,
    authority: &AccountInfo<'info>,
    amount: u64,
    decimals: u8,
    signer_seeds: &[&[&[u8]]],
) -> Result<()> {
    let ix = transfer_checked_ix(
        token_program,
        from.key,
        mint.key,
        to.key,
        authority.key,
        amount,
        decimals,
    );
    invoke_signed_unchecked(
        &ix,
        &[from.clone(), mint.clone(), to.clone(), authority.clone()],
        signer_seeds,
    )
    .map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use {
        super::*,
        anchor_lang::solana_program::system_instruction,
        anchor_spl::{token::spl_token, token_2022::spl_token_2022},
    };

    fn key(b: u8) -> Pubkey {
        Pubkey::new_from_array([b; 32])
    }

    #[test]
    fn create_account_is_the_system_programs_instruction() {
        let (from, to, owner) = (key(1), key(2), key(3));
        assert_eq!(
            create_account_ix(&from, &to, 1_955_760, 153, &owner),
            system_instruction::create_account(&from, &to, 1_955_760, 153, &owner)
        );
        assert_eq!(
            create_account_ix(&from, &to, u64::MAX, u64::MAX - 1, &owner),
            system_instruction::create_account(&from, &to, u64::MAX, u64::MAX - 1, &owner)
        );
    }

    #[test]
    fn transfer_checked_is_the_token_programs_instruction() {
        let (from, mint, to, authority) = (key(1), key(2), key(3), key(4));
        for program in [spl_token::ID, spl_token_2022::ID] {
            for (amount, decimals) in [(1, 0), (1_000, 6), (u64::MAX, 255)] {
                assert_eq!(
                    transfer_checked_ix(&program, &from, &mint, &to, &authority, amount, decimals),
                    spl_token_2022::instruction::transfer_checked(
                        &program,
                        &from,
                        &mint,
                        &to,
                        &authority,
                        &[],
                        amount,
                        decimals
                    )
                    .unwrap()
                );
            }
        }
    }
}
