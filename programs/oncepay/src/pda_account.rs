//! Creates an account owned by this program at one of its PDAs (the op
//! record, the merchant config) with anchor-lang's `system_program` helpers,
//! on the path Anchor's own `init` takes. Used instead of `init` because both
//! instructions answer an existing account with their own named error
//! (`OperationAlreadyConsumed`, `MerchantAlreadyInitialized`), which must come
//! before `init` would run (it runs first and fails inside the System program
//! with "already in use", custom error 0); see each instruction's accounts.

use anchor_lang::{
    prelude::*,
    system_program::{
        allocate, assign, create_account, transfer, Allocate, Assign, CreateAccount, Transfer,
    },
};

/// Creates `account`, a System account without data (the caller's
/// constraints checked it), with `space` bytes, owned by this program and
/// funded by `payer`. `signer_seeds` are the PDA's seeds, bump last: only
/// this program can sign for the address, so only it can create the account.
pub fn create_pda_account<'info>(
    payer: &Signer<'info>,
    account: &UncheckedAccount<'info>,
    system_program: &Program<'info, System>,
    space: usize,
    signer_seeds: &[&[u8]],
) -> Result<()> {
    // The rent-exempt minimum, and at least 1 lamport: under a zero rent rate
    // the minimum is 0, the runtime deletes a 0-lamport account at the end of
    // the transaction, and the same op_id could then pay again.
    let lamports = Rent::get()?.minimum_balance(space).max(1);
    let space = space as u64; // lossless: usize is 64 bits on SBF and on the host
    let signer = &[signer_seeds];
    let system = system_program.to_account_info();
    let current = account.lamports();
    if current == 0 {
        let accounts = CreateAccount {
            from: payer.to_account_info(),
            to: account.to_account_info(),
        };
        let cpi = CpiContext::new_with_signer(system, accounts, signer);
        return create_account(cpi, lamports, space, &crate::ID);
    }
    // Pre-funded: anyone may send lamports to the address before it exists,
    // and CreateAccount refuses an address that holds lamports, so 1 lamport
    // would block an op_id for good. Top up, then Allocate and Assign (signed
    // by the PDA), as `init` does.
    let shortfall = lamports.saturating_sub(current);
    if shortfall > 0 {
        let accounts = Transfer {
            from: payer.to_account_info(),
            to: account.to_account_info(),
        };
        transfer(CpiContext::new(system.clone(), accounts), shortfall)?;
    }
    let accounts = Allocate {
        account_to_allocate: account.to_account_info(),
    };
    allocate(
        CpiContext::new_with_signer(system.clone(), accounts, signer),
        space,
    )?;
    let accounts = Assign {
        account_to_assign: account.to_account_info(),
    };
    assign(
        CpiContext::new_with_signer(system, accounts, signer),
        &crate::ID,
    )
}
