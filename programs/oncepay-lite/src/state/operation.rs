//! `Operation`: the record of one executed payout, at the PDA
//! `["op", merchant, op_id]`. Its existence is the "paid" bit: no instruction
//! closes, reallocates or re-initialises it.

use {super::Layout, crate::discriminator::discriminator, pinocchio::pubkey::Pubkey};

/// Seed prefix of the operation PDA.
pub const OPERATION_SEED: &[u8] = b"op";

/// Byte layout (Borsh order):
/// `[0..8]` discriminator, `[8..40]` op_id, `[40..72]` merchant,
/// `[72..104]` recipient (token account), `[104..136]` mint, `[136..144]`
/// amount (u64 LE), `[144..152]` slot (u64 LE), `[152]` bump.
#[repr(C)]
pub struct Operation {
    discriminator: [u8; 8],
    op_id: [u8; 32],
    merchant: Pubkey,
    recipient: Pubkey,
    mint: Pubkey,
    amount: [u8; 8],
    slot: [u8; 8],
    bump: u8,
}

// SAFETY: repr(C), only u8 arrays (alignment 1), every bit pattern valid.
unsafe impl Layout for Operation {
    const LEN: usize = 8 + 32 + 32 + 32 + 32 + 8 + 8 + 1;
    const DISCRIMINATOR: [u8; 8] = discriminator(b"account:Operation");
}

/// The fields of a payout record.
pub struct OperationRecord<'a> {
    pub op_id: &'a [u8; 32],
    pub merchant: &'a Pubkey,
    pub recipient: &'a Pubkey,
    pub mint: &'a Pubkey,
    pub amount: u64,
    pub slot: u64,
    pub bump: u8,
}

impl Operation {
    #[inline(always)]
    pub fn op_id(&self) -> &[u8; 32] {
        &self.op_id
    }

    #[inline(always)]
    pub fn merchant(&self) -> &Pubkey {
        &self.merchant
    }

    #[inline(always)]
    pub fn recipient(&self) -> &Pubkey {
        &self.recipient
    }

    #[inline(always)]
    pub fn mint(&self) -> &Pubkey {
        &self.mint
    }

    #[inline(always)]
    pub fn amount(&self) -> u64 {
        u64::from_le_bytes(self.amount)
    }

    #[inline(always)]
    pub fn slot(&self) -> u64 {
        u64::from_le_bytes(self.slot)
    }

    #[inline(always)]
    pub fn bump(&self) -> u8 {
        self.bump
    }

    /// Writes the whole record, discriminator first.
    #[inline(always)]
    pub fn write(&mut self, r: &OperationRecord) {
        self.discriminator = Self::DISCRIMINATOR;
        self.op_id = *r.op_id;
        self.merchant = *r.merchant;
        self.recipient = *r.recipient;
        self.mint = *r.mint;
        self.amount = r.amount.to_le_bytes();
        self.slot = r.slot.to_le_bytes();
        self.bump = r.bump;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_borsh_order_with_alignment_one() {
        assert_eq!(core::mem::size_of::<Operation>(), Operation::LEN);
        assert_eq!(Operation::LEN, 153);
        assert_eq!(core::mem::align_of::<Operation>(), 1);
        let mut data = [0u8; 153];
        Operation::from_bytes_mut_unchecked(&mut data)
            .unwrap()
            .write(&OperationRecord {
                op_id: &[3; 32],
                merchant: &[4; 32],
                recipient: &[5; 32],
                mint: &[6; 32],
                amount: u64::MAX - 1,
                slot: 0x0102_0304_0506_0708,
                bump: 254,
            });
        assert_eq!(&data[..8], &Operation::DISCRIMINATOR);
        assert_eq!(&data[8..40], &[3; 32]);
        assert_eq!(&data[40..72], &[4; 32]);
        assert_eq!(&data[72..104], &[5; 32]);
        assert_eq!(&data[104..136], &[6; 32]);
        assert_eq!(&data[136..144], &(u64::MAX - 1).to_le_bytes());
        assert_eq!(&data[144..152], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(data[152], 254);
        let op = Operation::from_bytes(&data).unwrap();
        assert_eq!(op.amount(), u64::MAX - 1);
        assert_eq!(op.slot(), 0x0102_0304_0506_0708);
    }
}
