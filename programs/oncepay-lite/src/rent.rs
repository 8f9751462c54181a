//! Lamports a new program account is funded with: the rent-exempt minimum,
//! without floating point, and never less than 1 lamport.
//!
//! At least 1 lamport: with a zero rent rate the minimum is 0, and the
//! runtime deletes a 0-lamport account at the end of the transaction, so the
//! op account would vanish and the same op_id could pay again.

use {
    crate::error::OncepayError,
    pinocchio::sysvars::{rent::Rent, Sysvar},
};

/// Bytes every account is charged for besides its data.
const ACCOUNT_STORAGE_OVERHEAD: u64 = 128;
/// `2.0f64.to_bits()`: the exemption threshold of every cluster today.
const THRESHOLD_TWO_BITS: u64 = 0x4000_0000_0000_0000;
/// `1.0f64.to_bits()`: the threshold after SIMD-0194.
const THRESHOLD_ONE_BITS: u64 = 0x3ff0_0000_0000_0000;

/// Lamports to fund an account of `data_len` bytes with: the rent-exempt
/// minimum computed from the Rent sysvar fields with integer math (the
/// threshold is matched by its bits; a threshold other than 1.0 or 2.0 is
/// refused, not rounded), and at least 1.
#[inline(always)]
pub fn funding_lamports(data_len: usize) -> Result<u64, OncepayError> {
    let rent = Rent::get().map_err(|_| OncepayError::UnsupportedRentSysvar)?;
    #[allow(deprecated)]
    let (per_byte_year, threshold_bits) = (
        rent.lamports_per_byte_year,
        rent.exemption_threshold.to_bits(),
    );
    funding_lamports_from(per_byte_year, threshold_bits, data_len)
}

/// Pure part of [`funding_lamports`].
#[inline(always)]
pub fn funding_lamports_from(
    lamports_per_byte_year: u64,
    threshold_bits: u64,
    data_len: usize,
) -> Result<u64, OncepayError> {
    let multiplier = match threshold_bits {
        THRESHOLD_TWO_BITS => 2,
        THRESHOLD_ONE_BITS => 1,
        _ => return Err(OncepayError::UnsupportedRentSysvar),
    };
    (data_len as u64)
        .checked_add(ACCOUNT_STORAGE_OVERHEAD)
        .and_then(|bytes| bytes.checked_mul(lamports_per_byte_year))
        .and_then(|l| l.checked_mul(multiplier))
        .map(|minimum| minimum.max(1))
        .ok_or(OncepayError::ArithmeticOverflow)
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
            funding_lamports_from(3480, THRESHOLD_TWO_BITS, 153),
            Ok(1_955_760)
        );
        assert_eq!(
            funding_lamports_from(6960, THRESHOLD_ONE_BITS, 153),
            Ok(1_955_760)
        );
    }

    #[test]
    fn a_zero_rate_still_funds_one_lamport() {
        assert_eq!(funding_lamports_from(0, THRESHOLD_TWO_BITS, 153), Ok(1));
        assert_eq!(funding_lamports_from(0, THRESHOLD_ONE_BITS, 74), Ok(1));
    }

    #[test]
    fn refuses_unknown_thresholds_and_overflow() {
        assert_eq!(
            funding_lamports_from(3480, 1.5f64.to_bits(), 10),
            Err(OncepayError::UnsupportedRentSysvar)
        );
        assert_eq!(
            funding_lamports_from(u64::MAX, THRESHOLD_TWO_BITS, 10),
            Err(OncepayError::ArithmeticOverflow)
        );
    }
}
