//! Events, logged by `emit!` as `Program data: base64(discriminator ‖
//! borsh(fields))`, which `@coral-xyz/anchor`'s `EventParser` decodes with
//! the IDL.

use anchor_lang::prelude::*;

/// Emitted by execute_payout.
#[event]
#[derive(Debug, PartialEq, Eq)]
pub struct PayoutExecuted {
    pub op_id: [u8; 32],
    pub merchant: Pubkey,
    pub recipient: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    pub slot: u64,
}

#[cfg(test)]
mod tests {
    use {super::*, anchor_lang::Event};

    #[test]
    fn encodes_discriminator_then_borsh_fields() {
        let e = PayoutExecuted {
            op_id: [1; 32],
            merchant: Pubkey::new_from_array([2; 32]),
            recipient: Pubkey::new_from_array([3; 32]),
            mint: Pubkey::new_from_array([4; 32]),
            amount: u64::MAX,
            slot: 42,
        }
        .data();
        assert_eq!(e.len(), 152);
        assert_eq!(&e[..8], &[88, 83, 101, 64, 188, 233, 117, 185]);
        assert_eq!(&e[8..40], &[1; 32]);
        assert_eq!(&e[104..136], &[4; 32]);
        assert_eq!(&e[136..144], &[0xff; 8]);
        assert_eq!(&e[144..152], &42u64.to_le_bytes());
    }
}
