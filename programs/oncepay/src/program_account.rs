//! Creates a PDA owned by this program, the way Anchor's `init` does, but
//! after the instruction has answered its own error for an account that
//! already exists.
//!
//! Why not `#[account(init, ...)]`: `init` runs before every other
//! constraint, and on an existing account it fails inside the System
//! program ("already in use", custom error 0). Clients rely on
//! `OperationAlreadyConsumed` (6000) to mean "this op_id was paid" and on
//! `MerchantAlreadyInitialized` (6019); so the callers check the account
//! first (`fresh`) and create it here.
//!
//! Pre-funded-safe, like `init`: a PDA address anyone may have sent lamports
//! to is completed with `Transfer` (the shortfall) + `Allocate` + `Assign`
//! instead of `CreateAccount`, which would refuse it. Every call is signed
//! with the PDA's seeds. `CreateAccount`, the path of every payout, is built
//! by hand (cpi.rs); the others through Anchor's `system_program` helpers.

use {
    crate::{cpi, rent},
    anchor_lang::{
        prelude::*,
        system_program::{self, Allocate, Assign, Transfer},
    },
};

/// How an account at a PDA of ours stands before we create it.
#[derive(Debug, PartialEq, Eq)]
pub enum PdaState {
    /// Owned by the System program, no data (possibly pre-funded): creatable.
    Fresh,
    /// Owned by this program: already created (by us; nothing else can).
    Created,
    /// Anything else (cannot happen at a PDA of ours without our signature).
    Foreign,
}

/// Classifies `account` by owner and data length.
pub fn pda_state(account: &AccountInfo) -> PdaState {
    if account.owner == &crate::ID {
        PdaState::Created
    } else if account.owner == &system_program::ID && account.data_is_empty() {
        PdaState::Fresh
    } else {
        PdaState::Foreign
    }
}

/// Creates `target` (a [`PdaState::Fresh`] account) with `space` bytes,
/// owned by this program and funded by `payer` with [`rent::funding_lamports`].
pub fn create_pda<'info>(
    payer: &AccountInfo<'info>,
    target: &AccountInfo<'info>,
    system_program: &AccountInfo<'info>,
    space: usize,
    signer_seeds: &[&[u8]],
) -> Result<()> {
    let required = rent::funding_lamports(space)?;
    crate::cu_checkpoint!();
    let signer = &[signer_seeds];
    let space = space as u64; // lossless: usize is 64 bits on SBF and on the host
    let current = target.lamports();
    if current == 0 {
        return cpi::create_account(payer, target, required, space, &crate::ID, signer);
    }
    let shortfall = required.saturating_sub(current);
    if shortfall > 0 {
        let accounts = Transfer {
            from: payer.clone(),
            to: target.clone(),
        };
        system_program::transfer(CpiContext::new(system_program.clone(), accounts), shortfall)?;
    }
    let accounts = Allocate {
        account_to_allocate: target.clone(),
    };
    system_program::allocate(
        CpiContext::new_with_signer(system_program.clone(), accounts, signer),
        space,
    )?;
    let accounts = Assign {
        account_to_assign: target.clone(),
    };
    system_program::assign(
        CpiContext::new_with_signer(system_program.clone(), accounts, signer),
        &crate::ID,
    )
}
