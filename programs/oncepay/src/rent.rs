//! Lamports a new program account is funded with: the rent-exempt minimum,
//! from the Rent sysvar, with integer math, and never less than 1 lamport.
//!
//! Not `Rent::minimum_balance`: it multiplies without a check and rounds an
//! `f64` (soft-float on SBF). The exemption threshold is matched by its bits
//! (2.0, or 1.0 after SIMD-0194); any other value is refused, not rounded.
//!
//! At least 1 lamport: with a zero rent rate the minimum is 0, and a
//! 0-lamport account is deleted by the runtime at the end of the transaction,
//! so the op account would vanish and the same op_id could pay again.

use {crate::error::OncepayError, anchor_lang::prelude::*};

/// Bytes every account is charged for besides its data.
const ACCOUNT_STORAGE_OVERHEAD: u64 = 128;
/// `2.0f64.to_bits()`.
const THRESHOLD_TWO_BITS: u64 = 0x4000_0000_0000_0000;
/// `1.0f64.to_bits()`.
const THRESHOLD_ONE_BITS: u64 = 0x3ff0_0000_0000_0000;

/// Lamports to fund an account of `data_len` bytes with.
pub fn funding_lamports(data_len: usize) -> Result<u64> {
    let rent = Rent::get()?;
    funding_lamports_from(
        rent.lamports_per_byte_year,
        rent.exemption_threshold.to_bits(),
        data_len,
    )
}

/// Pure part of [`funding_lamports`].
pub fn funding_lamports_from(
    lamports_per_byte_year: u64,
    threshold_bits: u64,
    data_len: usize,
) -> Result<u64> {
    let years = match threshold_bits {
        THRESHOLD_TWO_BITS => 2,
        THRESHOLD_ONE_BITS => 1,
        _ => return err!(OncepayError::UnsupportedRentSysvar),
    };
    let minimum = u64::try_from(data_len)
        .ok()
        .and_then(|len| len.checked_add(ACCOUNT_STORAGE_OVERHEAD))
        .and_then(|bytes| bytes.checked_mul(lamports_per_byte_year))
        .and_then(|l| l.checked_mul(years))
        .ok_or(OncepayError::ArithmeticOverflow)?;
    Ok(minimum.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_default_rent() {
        assert_eq!(THRESHOLD_TWO_BITS, 2.0f64.to_bits());
        assert_eq!(THRESHOLD_ONE_BITS, 1.0f64.to_bits());
        // 3480 lamports/byte-year × 2 years × (128 + 153) bytes.
        assert_eq!(
            funding_lamports_from(3480, THRESHOLD_TWO_BITS, 153).unwrap(),
            1_955_760
        );
        assert_eq!(
            funding_lamports_from(6960, THRESHOLD_ONE_BITS, 153).unwrap(),
            1_955_760
        );
        assert_eq!(
            funding_lamports_from(3480, THRESHOLD_TWO_BITS, 153).unwrap(),
            Rent::default().minimum_balance(153)
        );
    }

    #[test]
    fn a_zero_rate_still_funds_one_lamport() {
        assert_eq!(
            funding_lamports_from(0, THRESHOLD_TWO_BITS, 153).unwrap(),
            1
        );
    }

    #[test]
    fn refuses_unknown_thresholds_and_overflow() {
        assert_eq!(
            funding_lamports_from(3480, 1.5f64.to_bits(), 10),
            Err(OncepayError::UnsupportedRentSysvar.into())
        );
        assert_eq!(
            funding_lamports_from(u64::MAX, THRESHOLD_TWO_BITS, 10),
            Err(OncepayError::ArithmeticOverflow.into())
        );
    }
}
