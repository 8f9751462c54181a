//! `TokenAccount` and `Mint` for `InterfaceAccount<'info, _>`: anchor-spl's
//! `token_interface` types, decoding only the fields this program reads.
//!
//! anchor-spl's types unpack the whole base state with Token-2022's
//! `StateWithExtensions::unpack` and copy it (~180 bytes per account, three
//! accounts per payout). These accept and refuse exactly the same data, with
//! the same errors (the host tests below compare them with
//! `StateWithExtensions::unpack` itself), and keep what `execute_payout` and
//! its `token::` / `mint::` constraints read: `mint`, `owner`, `amount`;
//! `decimals`.
//!
//! The rules, in Token-2022's order:
//! - never the 355-byte `Multisig` size, never shorter than the base (165-byte
//!   account, 82-byte mint) → `InvalidAccountData`;
//! - the base decodes: `COption` tags 0 or 1, an account's state byte 0..=2, a
//!   mint's `is_initialized` bool 0 or 1 → `InvalidAccountData`; not
//!   initialised → `UninitializedAccount`;
//! - longer data is Token-2022's extended layout: zero padding up to offset
//!   165, the account-type byte there names the right kind, and at least one
//!   byte follows it → `InvalidAccountData`.
//!
//! The owner (SPL Token or Token-2022) is checked by `InterfaceAccount` through
//! [`Owners`], before any byte is read. Frozen accounts decode (as with
//! anchor-spl): the token program refuses to move their tokens.

use {
    anchor_lang::{prelude::*, solana_program::program_error::ProgramError, Ids, Owners},
    anchor_spl::token_interface::TokenInterface,
};

/// Base token account size; Token-2022 accounts with extensions are longer.
pub const ACCOUNT_LEN: usize = 165;
/// Base mint size.
pub const MINT_LEN: usize = 82;
/// A token program's `Multisig` size: never a token account nor a mint.
pub const MULTISIG_LEN: usize = 355;
/// Token-2022's `AccountType` byte, after the (padded) base of either kind.
const ACCOUNT_TYPE_OFFSET: usize = ACCOUNT_LEN;
/// `AccountType::Mint`.
const ACCOUNT_TYPE_MINT: u8 = 1;
/// `AccountType::Account`.
const ACCOUNT_TYPE_ACCOUNT: u8 = 2;

/// A token account of SPL Token or Token-2022.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenAccount {
    pub mint: Pubkey,
    /// The token authority (the account's "owner" field).
    pub owner: Pubkey,
    pub amount: u64,
}

/// A mint of SPL Token or Token-2022.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mint {
    pub decimals: u8,
}

impl AccountDeserialize for TokenAccount {
    fn try_deserialize_unchecked(buf: &mut &[u8]) -> Result<Self> {
        Ok(unpack_account(buf)?)
    }
}

impl AccountDeserialize for Mint {
    fn try_deserialize_unchecked(buf: &mut &[u8]) -> Result<Self> {
        Ok(unpack_mint(buf)?)
    }
}

// Written by the token program only (as anchor-spl's types).
impl AccountSerialize for TokenAccount {}
impl AccountSerialize for Mint {}

impl Owners for TokenAccount {
    fn owners() -> &'static [Pubkey] {
        TokenInterface::ids()
    }
}

impl Owners for Mint {
    fn owners() -> &'static [Pubkey] {
        TokenInterface::ids()
    }
}

// What anchor-spl declares for its own token types under idl-build: the type
// is not added to the IDL (a token account is not this program's account).
#[cfg(feature = "idl-build")]
mod idl {
    use super::*;

    impl anchor_lang::IdlBuild for TokenAccount {}
    impl anchor_lang::Discriminator for TokenAccount {
        const DISCRIMINATOR: &'static [u8] = &[];
    }
    impl anchor_lang::IdlBuild for Mint {}
    impl anchor_lang::Discriminator for Mint {
        const DISCRIMINATOR: &'static [u8] = &[];
    }
}

/// Unpacks an initialised token account (base layout, or a Token-2022
/// account with extensions).
pub fn unpack_account(data: &[u8]) -> core::result::Result<TokenAccount, ProgramError> {
    min_len_not_multisig(data, ACCOUNT_LEN)?;
    // [0..32] mint, [32..64] owner, [64..72] amount, [72..76] delegate tag,
    // [108] state, [109..113] is_native tag, [129..133] close_authority tag.
    let tags = coption_tag(data, 72) && coption_tag(data, 109) && coption_tag(data, 129);
    if !tags || data[108] > 2 {
        return Err(ProgramError::InvalidAccountData);
    }
    if data[108] == 0 {
        return Err(ProgramError::UninitializedAccount);
    }
    extension_type(data, ACCOUNT_LEN, ACCOUNT_TYPE_ACCOUNT)?;
    Ok(TokenAccount {
        mint: Pubkey::new_from_array(bytes(data, 0)),
        owner: Pubkey::new_from_array(bytes(data, 32)),
        amount: u64::from_le_bytes(bytes(data, 64)),
    })
}

/// Unpacks an initialised mint (base layout, or a Token-2022 mint with
/// extensions).
pub fn unpack_mint(data: &[u8]) -> core::result::Result<Mint, ProgramError> {
    min_len_not_multisig(data, MINT_LEN)?;
    // [0..4] mint_authority tag, [44] decimals, [45] is_initialized,
    // [46..50] freeze_authority tag.
    if !coption_tag(data, 0) || !coption_tag(data, 46) || data[45] > 1 {
        return Err(ProgramError::InvalidAccountData);
    }
    if data[45] == 0 {
        return Err(ProgramError::UninitializedAccount);
    }
    extension_type(data, MINT_LEN, ACCOUNT_TYPE_MINT)?;
    Ok(Mint { decimals: data[44] })
}

fn min_len_not_multisig(data: &[u8], base_len: usize) -> core::result::Result<(), ProgramError> {
    if data.len() == MULTISIG_LEN || data.len() < base_len {
        return Err(ProgramError::InvalidAccountData);
    }
    Ok(())
}

/// Data past the base: zero padding up to the account-type byte, which must
/// be `account_type`, and at least one byte after it.
fn extension_type(
    data: &[u8],
    base_len: usize,
    account_type: u8,
) -> core::result::Result<(), ProgramError> {
    if data.len() == base_len {
        return Ok(());
    }
    if data.len() <= ACCOUNT_TYPE_OFFSET + 1
        || data[base_len..ACCOUNT_TYPE_OFFSET].iter().any(|b| *b != 0)
        || data[ACCOUNT_TYPE_OFFSET] != account_type
    {
        return Err(ProgramError::InvalidAccountData);
    }
    Ok(())
}

/// Whether the 4-byte `COption` tag at `at` is `None` (0) or `Some` (1).
fn coption_tag(data: &[u8], at: usize) -> bool {
    matches!(bytes::<4>(data, at), [0 | 1, 0, 0, 0])
}

/// `N` bytes at `at`; every caller has checked `data.len()` against the base
/// size, which covers `at + N`.
fn bytes<const N: usize>(data: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&data[at..at + N]);
    out
}

#[cfg(test)]
mod tests {
    use {
        super::*,
        anchor_spl::token_2022::spl_token_2022::{
            extension::StateWithExtensions,
            state::{Account as SplAccount, Mint as SplMint},
        },
    };

    /// A packed initialised token account: mint 1…, owner 2…, amount 7.
    fn account() -> Vec<u8> {
        let mut d = vec![0u8; ACCOUNT_LEN];
        d[..32].fill(1);
        d[32..64].fill(2);
        d[64] = 7;
        d[108] = 1;
        d
    }

    /// A packed initialised mint with 6 decimals and a mint authority.
    fn mint() -> Vec<u8> {
        let mut d = vec![0u8; MINT_LEN];
        d[0] = 1;
        d[4..36].fill(3);
        d[44] = 6;
        d[45] = 1;
        d
    }

    /// Token-2022's extended layout: padding, account type, one TLV entry.
    fn extended(mut base: Vec<u8>, account_type: u8) -> Vec<u8> {
        base.resize(ACCOUNT_LEN, 0);
        base.push(account_type);
        base.extend_from_slice(&[7, 0, 0, 0]); // ImmutableOwner, length 0
        base
    }

    /// Every variant the rules distinguish, for accounts and mints alike.
    fn cases() -> Vec<(&'static str, Vec<u8>)> {
        let mut cases = vec![
            ("account", account()),
            ("mint", mint()),
            (
                "account, extended",
                extended(account(), ACCOUNT_TYPE_ACCOUNT),
            ),
            ("mint, extended", extended(mint(), ACCOUNT_TYPE_MINT)),
            (
                "account typed as mint",
                extended(account(), ACCOUNT_TYPE_MINT),
            ),
            (
                "mint typed as account",
                extended(mint(), ACCOUNT_TYPE_ACCOUNT),
            ),
            ("account type 9", extended(account(), 9)),
            ("multisig size", vec![1u8; MULTISIG_LEN]),
            ("empty", vec![]),
            (
                "account + 1 byte",
                [account(), vec![ACCOUNT_TYPE_ACCOUNT]].concat(),
            ),
            ("mint + 1 byte", [mint(), vec![0]].concat()),
            ("uninitialised account", vec![0u8; ACCOUNT_LEN]),
            ("uninitialised mint", vec![0u8; MINT_LEN]),
        ];
        let mut frozen = account();
        frozen[108] = 2;
        cases.push(("frozen account", frozen));
        for (at, what) in [
            (72, "delegate tag"),
            (109, "is_native tag"),
            (129, "close tag"),
        ] {
            for tag in [1u8, 2] {
                let mut d = account();
                d[at] = tag;
                cases.push((what, d));
            }
        }
        let mut bad_state = account();
        bad_state[108] = 3;
        cases.push(("state 3", bad_state));
        let mut bad_bool = mint();
        bad_bool[45] = 2;
        cases.push(("is_initialized 2", bad_bool));
        let mut bad_freeze = mint();
        bad_freeze[46] = 2;
        cases.push(("freeze tag 2", bad_freeze));
        let mut padded = extended(mint(), ACCOUNT_TYPE_MINT);
        padded[100] = 1;
        cases.push(("mint padding not zero", padded));
        cases
    }

    #[test]
    fn accounts_and_mints_unpack_as_token_2022_does() {
        let (mut accounts, mut mints) = (0, 0);
        for (name, data) in cases() {
            let ours = unpack_account(&data).map(|a| (a.mint, a.owner, a.amount));
            let theirs = StateWithExtensions::<SplAccount>::unpack(&data)
                .map(|s| (s.base.mint, s.base.owner, s.base.amount));
            assert_eq!(ours, theirs, "as a token account: {name}");
            accounts += usize::from(ours.is_ok());
            let ours = unpack_mint(&data).map(|m| m.decimals);
            let theirs = StateWithExtensions::<SplMint>::unpack(&data).map(|s| s.base.decimals);
            assert_eq!(ours, theirs, "as a mint: {name}");
            mints += usize::from(ours.is_ok());
        }
        // account, extended account, frozen, three Some tags / mint, extended mint
        assert_eq!((accounts, mints), (6, 2));
    }

    #[test]
    fn reads_the_fields_and_refuses_the_multisig_size() {
        let a = unpack_account(&account()).unwrap();
        assert_eq!(a.mint, Pubkey::new_from_array([1; 32]));
        assert_eq!(a.owner, Pubkey::new_from_array([2; 32]));
        assert_eq!(a.amount, 7);
        assert_eq!(unpack_mint(&mint()).unwrap().decimals, 6);
        assert_eq!(
            unpack_account(&[1u8; MULTISIG_LEN]),
            Err(ProgramError::InvalidAccountData)
        );
        assert_eq!(
            <TokenAccount as Owners>::owners(),
            &[anchor_spl::token::ID, anchor_spl::token_2022::ID]
        );
    }
}
