//! oncepay: an on-chain payout program that pays each operation id at most
//! once.
//!
//! `execute_payout` creates the operation PDA `["op", merchant, op_id]` and
//! moves the tokens in one atomic instruction; the PDA can never be created
//! twice, so a payout can never be applied twice, whatever the delivery does.
//! The interface follows Anchor's conventions (discriminators, IDL, error
//! codes from 6000, `emit!`-style events) so `@coral-xyz/anchor` clients work.
#![no_std]

// Off-chain builds (host tests, the IDL generator, a cdylib without the
// entrypoint) link `std` for its panic handler and test harness.
#[cfg(not(target_os = "solana"))]
extern crate std;

/// Profiling checkpoint: logs the remaining compute units (feature
/// `cu-trace`), nothing otherwise.
macro_rules! cu_checkpoint {
    () => {
        #[cfg(feature = "cu-trace")]
        pinocchio::log::sol_log_compute_units();
    };
}
pub(crate) use cu_checkpoint;

pub mod address;
pub mod anchor_error;
pub mod cpi;
pub mod discriminator;
#[cfg(feature = "bpf-entrypoint")]
mod entrypoint;
pub mod error;
pub mod events;
pub mod instructions;
pub mod keys;
pub mod pda;
pub mod rent;
pub mod state;
pub mod token;

/// The program id, as declared in `Anchor.toml` and the IDL.
pub const PROGRAM_ID_BASE58: &str = "5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj";

pub use address::PROGRAM_ID as ID;
