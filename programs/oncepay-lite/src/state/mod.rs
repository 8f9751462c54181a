//! Account layouts. Every account starts with its 8-byte Anchor discriminator
//! (`sha256("account:<Name>")[..8]`) followed by its fields in Borsh order, so
//! Anchor's `BorshAccountsCoder` decodes them from the IDL. Fields are byte
//! arrays behind accessors: alignment 1, so a `&T` over account data is sound.

pub mod merchant;
pub mod operation;

pub use {merchant::Merchant, operation::Operation};

/// A zero-copy account layout.
///
/// # Safety
/// Implementors must be `#[repr(C)]`, have alignment 1, be exactly `LEN`
/// bytes, and accept every bit pattern.
pub unsafe trait Layout: Sized {
    /// Size in bytes, discriminator included.
    const LEN: usize;
    /// `sha256("account:<Name>")[..8]`.
    const DISCRIMINATOR: [u8; 8];

    /// Whether the fields are valid Borsh (e.g. a `bool` byte is 0 or 1), as
    /// Anchor's `AccountDeserialize` requires.
    #[inline(always)]
    fn borsh_valid(&self) -> bool {
        true
    }

    /// Views `data` as `Self` after checking length and discriminator.
    #[inline(always)]
    fn from_bytes(data: &[u8]) -> Option<&Self> {
        const { assert!(core::mem::align_of::<Self>() == 1) };
        if data.len() != Self::LEN || data.get(..8)? != Self::DISCRIMINATOR {
            return None;
        }
        // SAFETY: length checked above, alignment is 1 (const-asserted) and
        // every bit pattern is valid (trait contract).
        Some(unsafe { &*(data.as_ptr() as *const Self) })
    }

    /// Mutable view over exactly `LEN` bytes, without the discriminator
    /// check (used to write a freshly created account).
    #[inline(always)]
    fn from_bytes_mut_unchecked(data: &mut [u8]) -> Option<&mut Self> {
        const { assert!(core::mem::align_of::<Self>() == 1) };
        if data.len() != Self::LEN {
            return None;
        }
        // SAFETY: length checked, alignment 1, every bit pattern valid.
        Some(unsafe { &mut *(data.as_mut_ptr() as *mut Self) })
    }
}
