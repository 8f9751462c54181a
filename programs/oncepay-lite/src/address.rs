//! Well-known addresses, decoded from base58 at compile time.

use {crate::keys::AlignedKey, pinocchio::pubkey::Pubkey};

/// Decodes a base58 address in `const` context; a bad string fails the build.
pub const fn from_base58(s: &str) -> Pubkey {
    const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let input = s.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < input.len() {
        let mut digit = 0usize;
        while digit < 58 && ALPHABET[digit] != input[i] {
            digit += 1;
        }
        assert!(digit < 58, "invalid base58 character");
        // out = out * 58 + digit, big-endian.
        let mut carry = digit as u32;
        let mut j = 32;
        while j > 0 {
            j -= 1;
            let v = out[j] as u32 * 58 + carry;
            out[j] = (v & 0xff) as u8;
            carry = v >> 8;
        }
        assert!(carry == 0, "base58 value does not fit 32 bytes");
        i += 1;
    }
    out
}

/// This program.
pub const PROGRAM_ID: Pubkey = from_base58(crate::PROGRAM_ID_BASE58);
/// The System program.
pub const SYSTEM_PROGRAM_ID: Pubkey = [0u8; 32];
/// SPL Token (legacy; p-token on newer clusters, same interface).
pub const TOKEN_PROGRAM_ID: Pubkey = from_base58("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
/// SPL Token-2022.
pub const TOKEN_2022_PROGRAM_ID: Pubkey =
    from_base58("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");

/// Aligned copies for cheap comparison (see `keys.rs`).
pub static SYSTEM_PROGRAM: AlignedKey = AlignedKey(SYSTEM_PROGRAM_ID);
pub static TOKEN_PROGRAM: AlignedKey = AlignedKey(TOKEN_PROGRAM_ID);
pub static TOKEN_2022_PROGRAM: AlignedKey = AlignedKey(TOKEN_2022_PROGRAM_ID);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_known_addresses() {
        assert_eq!(from_base58("11111111111111111111111111111111"), [0u8; 32]);
        // First and last bytes of the SPL Token id (06ddf6e1…f85ac859 in hex).
        assert_eq!(TOKEN_PROGRAM_ID[0], 0x06);
        assert_eq!(TOKEN_PROGRAM_ID[1], 0xdd);
        assert_eq!(TOKEN_PROGRAM_ID[31], 0xa9);
    }
}
