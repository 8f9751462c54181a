//! `Merchant`: the merchant config PDA `["merchant", merchant_authority]`.
//!
//! Vaults: any token account whose token authority (owner field) is this PDA
//! is that merchant's vault for its mint, so one merchant can hold several
//! mints, under SPL Token or Token-2022. The PDA signs vault transfers with
//! the stored `bump`.

use {super::Layout, crate::discriminator::discriminator, pinocchio::pubkey::Pubkey};

/// Seed prefix of the merchant PDA.
pub const MERCHANT_SEED: &[u8] = b"merchant";

/// Byte layout (Borsh order):
/// `[0..8]` discriminator, `[8..40]` merchant_authority, `[40..72]`
/// payout_authority, `[72]` paused (bool), `[73]` bump.
#[repr(C)]
pub struct Merchant {
    discriminator: [u8; 8],
    merchant_authority: Pubkey,
    payout_authority: Pubkey,
    paused: u8,
    bump: u8,
}

// SAFETY: repr(C), only u8 arrays (alignment 1), every bit pattern valid.
unsafe impl Layout for Merchant {
    const LEN: usize = 8 + 32 + 32 + 1 + 1;
    const DISCRIMINATOR: [u8; 8] = discriminator(b"account:Merchant");

    /// `paused` is a Borsh `bool`.
    #[inline(always)]
    fn borsh_valid(&self) -> bool {
        self.paused <= 1
    }
}

impl Merchant {
    /// Who may change the config (the PDA's seed).
    #[inline(always)]
    pub fn merchant_authority(&self) -> &Pubkey {
        &self.merchant_authority
    }

    /// Who may sign `execute_payout`.
    #[inline(always)]
    pub fn payout_authority(&self) -> &Pubkey {
        &self.payout_authority
    }

    /// Whether payouts are stopped.
    #[inline(always)]
    pub fn paused(&self) -> bool {
        self.paused != 0
    }

    /// Canonical bump of the merchant PDA.
    #[inline(always)]
    pub fn bump(&self) -> u8 {
        self.bump
    }

    /// Writes every field of a fresh config.
    #[inline(always)]
    pub fn init(&mut self, merchant_authority: &Pubkey, payout_authority: &Pubkey, bump: u8) {
        self.discriminator = Self::DISCRIMINATOR;
        self.merchant_authority = *merchant_authority;
        self.payout_authority = *payout_authority;
        self.paused = 0;
        self.bump = bump;
    }

    #[inline(always)]
    pub fn set_payout_authority(&mut self, key: &Pubkey) {
        self.payout_authority = *key;
    }

    #[inline(always)]
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_borsh_order_with_alignment_one() {
        assert_eq!(core::mem::size_of::<Merchant>(), Merchant::LEN);
        assert_eq!(Merchant::LEN, 74);
        assert_eq!(core::mem::align_of::<Merchant>(), 1);
        let mut data = [0u8; 74];
        let m = Merchant::from_bytes_mut_unchecked(&mut data).unwrap();
        m.init(&[1; 32], &[2; 32], 253);
        m.set_paused(true);
        assert_eq!(&data[..8], &Merchant::DISCRIMINATOR);
        assert_eq!(&data[8..40], &[1; 32]);
        assert_eq!(&data[40..72], &[2; 32]);
        assert_eq!(data[72], 1);
        assert_eq!(data[73], 253);
        let m = Merchant::from_bytes(&data).unwrap();
        assert!(m.paused());
        assert_eq!(m.bump(), 253);
    }

    #[test]
    fn from_bytes_rejects_wrong_length_and_discriminator() {
        let mut data = [0u8; 74];
        assert!(Merchant::from_bytes(&data).is_none());
        data[..8].copy_from_slice(&Merchant::DISCRIMINATOR);
        assert!(Merchant::from_bytes(&data).is_some());
        assert!(Merchant::from_bytes(&data[..73]).is_none());
    }
}
