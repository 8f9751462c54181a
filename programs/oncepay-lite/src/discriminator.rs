//! Anchor discriminators, computed at compile time from their names.
//!
//! `sha256("global:<ix>")[..8]`, `sha256("account:<Name>")[..8]` and
//! `sha256("event:<Name>")[..8]` are what `@coral-xyz/anchor` derives from an
//! IDL, so the program, the IDL and every client agree by construction. The
//! hash runs in `const` context only: nothing here costs compute units.

/// First 8 bytes of `sha256(preimage)`.
pub const fn discriminator(preimage: &[u8]) -> [u8; 8] {
    let hash = sha256(preimage);
    let mut out = [0u8; 8];
    let mut i = 0;
    while i < 8 {
        out[i] = hash[i];
        i += 1;
    }
    out
}

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// Plain FIPS 180-4 SHA-256, usable in `const` context (host tests check it
/// against the `sha2` crate). Also used on the host to mirror the on-chain
/// PDA derivation; on chain the `sol_sha256` syscall is used instead.
pub const fn sha256(data: &[u8]) -> [u8; 32] {
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    // Padded length: data + 0x80 + zeros + 8-byte bit length, a multiple of 64.
    let total = (data.len() + 9).div_ceil(64) * 64;
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let mut block_start = 0;
    while block_start < total {
        let mut w = [0u32; 64];
        let mut t = 0;
        while t < 16 {
            let mut word = 0u32;
            let mut b = 0;
            while b < 4 {
                let idx = block_start + t * 4 + b;
                let byte = if idx < data.len() {
                    data[idx]
                } else if idx == data.len() {
                    0x80
                } else if idx >= total - 8 {
                    (bit_len >> ((total - 1 - idx) * 8)) as u8
                } else {
                    0
                };
                word = (word << 8) | byte as u32;
                b += 1;
            }
            w[t] = word;
            t += 1;
        }
        while t < 64 {
            let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
            let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16]
                .wrapping_add(s0)
                .wrapping_add(w[t - 7])
                .wrapping_add(s1);
            t += 1;
        }
        let (mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh) =
            (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
        let mut i = 0;
        while i < 64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
            i += 1;
        }
        h[0] = h[0].wrapping_add(a);
        h[1] = h[1].wrapping_add(b);
        h[2] = h[2].wrapping_add(c);
        h[3] = h[3].wrapping_add(d);
        h[4] = h[4].wrapping_add(e);
        h[5] = h[5].wrapping_add(f);
        h[6] = h[6].wrapping_add(g);
        h[7] = h[7].wrapping_add(hh);
        block_start += 64;
    }
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 8 {
        let bytes = h[i].to_be_bytes();
        out[i * 4] = bytes[0];
        out[i * 4 + 1] = bytes[1];
        out[i * 4 + 2] = bytes[2];
        out[i * 4 + 3] = bytes[3];
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use {super::*, sha2::Digest};

    #[test]
    fn const_sha256_matches_sha2_for_every_padding_case() {
        let data: [u8; 200] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        for len in 0..data.len() {
            let expected: [u8; 32] = sha2::Sha256::digest(&data[..len]).into();
            assert_eq!(sha256(&data[..len]), expected, "len {len}");
        }
    }

    #[test]
    fn discriminator_is_anchor_global_namespace() {
        // Known value: Anchor's `global:initialize` discriminator.
        assert_eq!(
            discriminator(b"global:initialize"),
            [175, 175, 109, 31, 13, 152, 155, 237]
        );
    }
}
