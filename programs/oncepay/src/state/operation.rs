//! `Operation`: the record of one executed payout, at the PDA
//! `["op", merchant, op_id]`. Its existence is the "paid" bit: no instruction
//! closes, reallocates or re-initialises it.

use anchor_lang::prelude::*;

/// Seed prefix of the operation PDA.
pub const OPERATION_SEED: &[u8] = b"op";

/// Record of one executed payout at PDA ["op", merchant, op_id]; never closed.
#[account]
#[derive(InitSpace, Debug, PartialEq, Eq)]
pub struct Operation {
    pub op_id: [u8; 32],
    pub merchant: Pubkey,
    // The recipient token account.
    pub recipient: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    // Slot of the payout (Clock sysvar).
    pub slot: u64,
    pub bump: u8,
}

impl Operation {
    /// Account size, discriminator included (153).
    pub const LEN: usize = Self::DISCRIMINATOR.len() + Self::INIT_SPACE;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_the_twins_byte_for_byte() {
        let op = Operation {
            op_id: [3; 32],
            merchant: Pubkey::new_from_array([4; 32]),
            recipient: Pubkey::new_from_array([5; 32]),
            mint: Pubkey::new_from_array([6; 32]),
            amount: u64::MAX - 1,
            slot: 0x0102_0304_0506_0708,
            bump: 254,
        };
        let mut data = Vec::new();
        op.try_serialize(&mut data).unwrap();
        assert_eq!(data.len(), Operation::LEN);
        assert_eq!(Operation::LEN, 153);
        assert_eq!(&data[..8], &[171, 150, 196, 17, 229, 166, 58, 44]);
        assert_eq!(&data[8..40], &[3; 32]);
        assert_eq!(&data[40..72], &[4; 32]);
        assert_eq!(&data[72..104], &[5; 32]);
        assert_eq!(&data[104..136], &[6; 32]);
        assert_eq!(&data[136..144], &(u64::MAX - 1).to_le_bytes());
        assert_eq!(&data[144..152], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(data[152], 254);
        assert_eq!(Operation::try_deserialize(&mut &data[..]).unwrap(), op);
    }
}

/// Anchor's IDL lists an account type only when an instruction takes it as
/// `Account<T>`; `execute_payout` creates `Operation` through an
/// `UncheckedAccount` (why: execute_payout.rs). This prints Anchor's own IDL
/// entries for it (`IdlBuild::create_type`, the discriminator), which
/// idl/gen adds to the IDL.
#[cfg(all(test, feature = "idl-build"))]
#[test]
fn __oncepay_print_idl_unlisted_accounts() {
    use anchor_lang::{
        idl::{serde_json, types::IdlAccount, IdlBuild},
        Discriminator,
    };
    let ty = Operation::create_type().expect("Operation has an IDL type");
    let account = IdlAccount {
        name: ty.name.clone(),
        discriminator: Operation::DISCRIMINATOR.into(),
    };
    println!("--- oncepay unlisted account ---");
    println!(
        "{}",
        serde_json::to_string(&(account, ty)).expect("serialisable")
    );
    println!("--- oncepay end ---");
}
