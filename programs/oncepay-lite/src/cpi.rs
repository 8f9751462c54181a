//! The few cross-program calls this program makes, built by hand (no
//! dependency beyond `pinocchio`): System `CreateAccount`, `Transfer`,
//! `Allocate`, `Assign`, and Token `TransferChecked`, which has the same
//! encoding in SPL Token and Token-2022 (the caller passes the program id).

use {
    crate::address::SYSTEM_PROGRAM_ID,
    pinocchio::{
        account_info::AccountInfo,
        cpi::invoke_signed_unchecked,
        instruction::{Account, AccountMeta, Instruction, Signer},
        pubkey::Pubkey,
    },
};

/// Invokes `ix` with `infos` in the order of its metas. Returns nothing: a
/// failing CPI aborts the whole transaction in the runtime, it never returns
/// an error to the caller.
///
/// Not pinocchio's `invoke_signed`: its per-account borrow check compares
/// keys with unaligned loads (~100 instructions per account on this
/// backend). This program never holds a `RefCell`-style borrow across a
/// CPI: it reads account data through unchecked views that are dead before
/// any CPI and only borrows mutably after the last one.
#[inline(always)]
fn invoke<const N: usize>(ix: &Instruction, infos: [&AccountInfo; N], signers: &[Signer]) {
    let accounts: [Account; N] = infos.map(Account::from);
    // SAFETY: the metas in `ix` name exactly `infos`, in order (built next to
    // each call below), and no borrow of their data or lamports is alive
    // during the call (see above). The runtime itself checks privileges,
    // signers and ownership, and aborts the transaction on any CPI failure.
    unsafe { invoke_signed_unchecked(ix, &accounts, signers) };
}

/// System `CreateAccount`.
///
/// ### Accounts:
///   0. `[writable, signer]` funding account
///   1. `[writable, signer]` new account
///
/// Data: `[0..4]` 0u32, `[4..12]` lamports, `[12..20]` space, `[20..52]`
/// owner.
pub fn create_account(
    from: &AccountInfo,
    to: &AccountInfo,
    lamports: u64,
    space: u64,
    owner: &Pubkey,
    signers: &[Signer],
) {
    let mut data = [0u8; 52];
    data[4..12].copy_from_slice(&lamports.to_le_bytes());
    data[12..20].copy_from_slice(&space.to_le_bytes());
    data[20..52].copy_from_slice(owner);
    let metas = [
        AccountMeta::writable_signer(from.key()),
        AccountMeta::writable_signer(to.key()),
    ];
    let ix = Instruction {
        program_id: &SYSTEM_PROGRAM_ID,
        data: &data,
        accounts: &metas,
    };
    invoke(&ix, [from, to], signers)
}

/// System `Transfer`.
///
/// ### Accounts:
///   0. `[writable, signer]` funding account
///   1. `[writable]` recipient
///
/// Data: `[0..4]` 2u32, `[4..12]` lamports.
pub fn transfer(from: &AccountInfo, to: &AccountInfo, lamports: u64) {
    let mut data = [0u8; 12];
    data[0] = 2;
    data[4..12].copy_from_slice(&lamports.to_le_bytes());
    let metas = [
        AccountMeta::writable_signer(from.key()),
        AccountMeta::writable(to.key()),
    ];
    let ix = Instruction {
        program_id: &SYSTEM_PROGRAM_ID,
        data: &data,
        accounts: &metas,
    };
    invoke(&ix, [from, to], &[])
}

/// System `Allocate`.
///
/// ### Accounts:
///   0. `[writable, signer]` account
///
/// Data: `[0..4]` 8u32, `[4..12]` space.
pub fn allocate(account: &AccountInfo, space: u64, signers: &[Signer]) {
    let mut data = [0u8; 12];
    data[0] = 8;
    data[4..12].copy_from_slice(&space.to_le_bytes());
    let metas = [AccountMeta::writable_signer(account.key())];
    let ix = Instruction {
        program_id: &SYSTEM_PROGRAM_ID,
        data: &data,
        accounts: &metas,
    };
    invoke(&ix, [account], signers)
}

/// System `Assign`.
///
/// ### Accounts:
///   0. `[writable, signer]` account
///
/// Data: `[0..4]` 1u32, `[4..36]` owner.
pub fn assign(account: &AccountInfo, owner: &Pubkey, signers: &[Signer]) {
    let mut data = [0u8; 36];
    data[0] = 1;
    data[4..36].copy_from_slice(owner);
    let metas = [AccountMeta::writable_signer(account.key())];
    let ix = Instruction {
        program_id: &SYSTEM_PROGRAM_ID,
        data: &data,
        accounts: &metas,
    };
    invoke(&ix, [account], signers)
}

/// Creates a program-owned account at a PDA even when someone pre-funded the
/// address: zero lamports → `CreateAccount`; otherwise `Transfer` the
/// shortfall (if any) + `Allocate` + `Assign` (a plain `CreateAccount` would
/// fail on a funded address, which would let anyone block a PDA for a few
/// lamports).
pub fn create_pda_account(
    payer: &AccountInfo,
    account: &AccountInfo,
    rent_exempt_lamports: u64,
    space: u64,
    owner: &Pubkey,
    signers: &[Signer],
) {
    let current = account.lamports();
    if current == 0 {
        create_account(payer, account, rent_exempt_lamports, space, owner, signers);
        return;
    }
    let shortfall = rent_exempt_lamports.saturating_sub(current);
    if shortfall > 0 {
        transfer(payer, account, shortfall);
    }
    allocate(account, space, signers);
    assign(account, owner, signers);
}

/// Token `TransferChecked` (discriminator 12), for SPL Token or Token-2022.
///
/// ### Accounts:
///   0. `[writable]` source token account
///   1. `[]` mint
///   2. `[writable]` destination token account
///   3. `[signer]` source authority
///
/// Data: `[0]` 12, `[1..9]` amount, `[9]` decimals.
#[allow(clippy::too_many_arguments)]
pub fn transfer_checked(
    token_program: &Pubkey,
    source: &AccountInfo,
    mint: &AccountInfo,
    destination: &AccountInfo,
    authority: &AccountInfo,
    amount: u64,
    decimals: u8,
    signers: &[Signer],
) {
    let mut data = [0u8; 10];
    data[0] = 12;
    data[1..9].copy_from_slice(&amount.to_le_bytes());
    data[9] = decimals;
    let metas = [
        AccountMeta::writable(source.key()),
        AccountMeta::readonly(mint.key()),
        AccountMeta::writable(destination.key()),
        AccountMeta::readonly_signer(authority.key()),
    ];
    let ix = Instruction {
        program_id: token_program,
        data: &data,
        accounts: &metas,
    };
    invoke(&ix, [source, mint, destination, authority], signers)
}
