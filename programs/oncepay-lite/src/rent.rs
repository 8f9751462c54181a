//! The rent-exempt minimum without floating point (what Anchor's `init`
//! funds a new account with).
//!
//! A zero rent rate makes it 0: a new account would then have 0 lamports,
//! the runtime would delete it at the end of the transaction, and the same
//! op_id could pay again. The instructions refuse that case
//! (`UnsupportedRentSysvar`, as the Anchor program does); see
//! `instructions::require_funded`.

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

/// Lamports an account of `data_len` bytes needs to be rent-exempt, computed
/// from the Rent sysvar fields with integer math (the threshold is matched
/// by its bits; a threshold other than 1.0 or 2.0 is refused, not rounded).
#[inline(always)]
pub fn minimum_balance(data_len: usize) -> Result<u64, OncepayError> {
    let rent = Rent::get().map_err(|_| OncepayError::UnsupportedRentSysvar)?;
    #[allow(deprecated)]
    let (per_byte_year, threshold_bits) = (
        rent.lamports_per_byte_year,
        rent.exemption_threshold.to_bits(),
    );
    minimum_balance_from(per_byte_year, threshold_bits, data_len)
}

/// Pure part of [`minimum_balance`].
#[inline(always)]
pub fn minimum_balance_from(
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
            minimum_balance_from(3480, THRESHOLD_TWO_BITS, 153),
            Ok(1_955_760)
        );
        assert_eq!(
            minimum_balance_from(6960, THRESHOLD_ONE_BITS, 153),
            Ok(1_955_760)
        );
    }

    #[test]
    fn a_zero_rate_gives_zero() {
        assert_eq!(minimum_balance_from(0, THRESHOLD_TWO_BITS, 153), Ok(0));
    }

    #[test]
    fn refuses_unknown_thresholds_and_overflow() {
        assert_eq!(
            minimum_balance_from(3480, 1.5f64.to_bits(), 10),
            Err(OncepayError::UnsupportedRentSysvar)
        );
        assert_eq!(
            minimum_balance_from(u64::MAX, THRESHOLD_TWO_BITS, 10),
            Err(OncepayError::ArithmeticOverflow)
        );
    }
}
