//! Account layouts: Anchor's `#[account]` (8-byte discriminator
//! `sha256("account:<Name>")[..8]`, then the fields in Borsh order). Every
//! field is a byte array, a `Pubkey`, a `u64`, a `bool` or a `u8`, so Borsh
//! writes exactly the bytes the lean twin's `#[repr(C)]` views read: no
//! padding, no reordering, no `zero_copy` needed. The host tests pin every
//! offset.

pub mod merchant;
pub mod operation;

pub use {merchant::Merchant, operation::Operation};
