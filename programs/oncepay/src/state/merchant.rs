//! `Merchant`: the merchant config PDA `["merchant", merchant_authority]`.
//!
//! Vaults: any token account whose token authority (owner field) is this PDA
//! is that merchant's vault for its mint, so one merchant can hold several
//! mints, under SPL Token or Token-2022. The PDA signs vault transfers with
//! the stored `bump`.

use anchor_lang::prelude::*;

/// Seed prefix of the merchant PDA.
pub const MERCHANT_SEED: &[u8] = b"merchant";

/// Merchant config at PDA ["merchant", merchant_authority].
#[account]
#[derive(InitSpace, Debug, PartialEq, Eq)]
pub struct Merchant {
    pub merchant_authority: Pubkey,
    pub payout_authority: Pubkey,
    pub paused: bool,
    pub bump: u8,
}

impl Merchant {
    /// Account size, discriminator included (74).
    pub const LEN: usize = Self::DISCRIMINATOR.len() + Self::INIT_SPACE;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_the_twins_byte_for_byte() {
        let m = Merchant {
            merchant_authority: Pubkey::new_from_array([1; 32]),
            payout_authority: Pubkey::new_from_array([2; 32]),
            paused: true,
            bump: 253,
        };
        let mut data = Vec::new();
        m.try_serialize(&mut data).unwrap();
        assert_eq!(data.len(), Merchant::LEN);
        assert_eq!(Merchant::LEN, 74);
        assert_eq!(&data[..8], &[71, 235, 30, 40, 231, 21, 32, 64]);
        assert_eq!(&data[8..40], &[1; 32]);
        assert_eq!(&data[40..72], &[2; 32]);
        assert_eq!(data[72], 1);
        assert_eq!(data[73], 253);
        assert_eq!(Merchant::try_deserialize(&mut &data[..]).unwrap(), m);
    }

    #[test]
    fn refuses_another_discriminator_and_a_bool_other_than_0_or_1() {
        let mut data = Vec::new();
        Merchant {
            merchant_authority: Pubkey::default(),
            payout_authority: Pubkey::default(),
            paused: false,
            bump: 255,
        }
        .try_serialize(&mut data)
        .unwrap();
        let mut bad_bool = data.clone();
        bad_bool[72] = 2;
        assert!(Merchant::try_deserialize(&mut &bad_bool[..]).is_err());
        data[0] ^= 1;
        assert!(Merchant::try_deserialize(&mut &data[..]).is_err());
    }
}
