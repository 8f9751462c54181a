//! Instructions: one file each, accounts struct and handler side by side.

pub mod execute_payout;
pub mod initialize_merchant;
pub mod update_merchant;

pub use {execute_payout::*, initialize_merchant::*, update_merchant::*};
