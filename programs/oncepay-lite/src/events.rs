//! Events, in Anchor's `emit!` format: `sol_log_data([discriminator ‖
//! borsh(fields)])`, which shows up as a `Program data: <base64>` log line
//! that `@coral-xyz/anchor`'s `EventParser` decodes with the IDL.

use {crate::discriminator::discriminator, pinocchio::pubkey::Pubkey};

/// `sha256("event:PayoutExecuted")[..8]`.
pub const PAYOUT_EXECUTED_DISCRIMINATOR: [u8; 8] = discriminator(b"event:PayoutExecuted");
/// Discriminator + op_id + merchant + recipient + mint + amount + slot.
pub const PAYOUT_EXECUTED_LEN: usize = 8 + 32 * 4 + 8 + 8;

/// `PayoutExecuted { op_id, merchant, recipient, mint, amount, slot }`,
/// Borsh-encoded behind its discriminator.
pub fn encode_payout_executed(
    op_id: &[u8; 32],
    merchant: &Pubkey,
    recipient: &Pubkey,
    mint: &Pubkey,
    amount: u64,
    slot: u64,
) -> [u8; PAYOUT_EXECUTED_LEN] {
    let mut out = [0u8; PAYOUT_EXECUTED_LEN];
    out[0..8].copy_from_slice(&PAYOUT_EXECUTED_DISCRIMINATOR);
    out[8..40].copy_from_slice(op_id);
    out[40..72].copy_from_slice(merchant);
    out[72..104].copy_from_slice(recipient);
    out[104..136].copy_from_slice(mint);
    out[136..144].copy_from_slice(&amount.to_le_bytes());
    out[144..152].copy_from_slice(&slot.to_le_bytes());
    out
}

/// Logs an encoded event as `Program data:`.
#[inline(always)]
pub fn emit(event: &[u8]) {
    pinocchio::log::sol_log_data(&[event]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payout_executed_is_discriminator_then_borsh_fields() {
        let e = encode_payout_executed(&[1; 32], &[2; 32], &[3; 32], &[4; 32], u64::MAX, 42);
        assert_eq!(&e[..8], &PAYOUT_EXECUTED_DISCRIMINATOR);
        assert_eq!(&e[8..40], &[1; 32]);
        assert_eq!(&e[104..136], &[4; 32]);
        assert_eq!(&e[136..144], &[0xff; 8]);
        assert_eq!(&e[144..152], &42u64.to_le_bytes());
    }
}
