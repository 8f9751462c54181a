//! The Anchor IDL (spec 0.1.0) and its TS type, generated from the program's
//! own constants, error enum and layouts (host tests only).
//!
//! `cargo test --lib` fails when `idl/oncepay.json` or `idl/oncepay.ts` differ
//! from a fresh generation, and (re)writes the build copies
//! `target/idl/oncepay.json` and `target/types/oncepay.ts`;
//! `ONCEPAY_WRITE_IDL=1 cargo test --lib idl` (what `programs/oncepay-lite/idl.sh`
//! runs) also rewrites the committed `idl/` files.

use {
    crate::{
        error::OncepayError,
        events::PAYOUT_EXECUTED_DISCRIMINATOR,
        instructions::{EXECUTE_PAYOUT, INITIALIZE_MERCHANT, SET_PAUSED, SET_PAYOUT_AUTHORITY},
        state::{merchant::MERCHANT_SEED, operation::OPERATION_SEED, Layout, Merchant, Operation},
        PROGRAM_ID_BASE58,
    },
    std::{
        borrow::ToOwned,
        format,
        string::{String, ToString},
        vec,
        vec::Vec,
    },
};

/// A JSON value that keeps key order (the IDL is read by people too).
#[derive(Clone)]
pub enum J {
    S(String),
    N(u64),
    B(bool),
    A(Vec<J>),
    O(Vec<(String, J)>),
}

fn s(v: &str) -> J {
    J::S(v.to_owned())
}

fn o(fields: Vec<(&str, J)>) -> J {
    J::O(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn bytes(b: &[u8]) -> J {
    J::A(b.iter().map(|x| J::N(*x as u64)).collect())
}

/// Pretty JSON with 2-space indentation (like `JSON.stringify(v, null, 2)`).
pub fn to_json(v: &J, indent: usize, out: &mut String) {
    let pad = |n: usize| " ".repeat(n);
    match v {
        J::S(x) => {
            out.push('"');
            for c in x.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        J::N(n) => out.push_str(&n.to_string()),
        J::B(b) => out.push_str(if *b { "true" } else { "false" }),
        J::A(items) if items.is_empty() => out.push_str("[]"),
        J::A(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad(indent + 2));
                to_json(item, indent + 2, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(indent));
            out.push(']');
        }
        J::O(fields) if fields.is_empty() => out.push_str("{}"),
        J::O(fields) => {
            out.push_str("{\n");
            for (i, (k, item)) in fields.iter().enumerate() {
                out.push_str(&pad(indent + 2));
                out.push('"');
                out.push_str(k);
                out.push_str("\": ");
                to_json(item, indent + 2, out);
                out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(indent));
            out.push('}');
        }
    }
}

/// Anchor's `camelcase` for snake_case and PascalCase names.
pub fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper_next = false;
    for (i, c) in name.chars().enumerate() {
        if c == '_' {
            upper_next = true;
        } else if i == 0 {
            out.extend(c.to_lowercase());
        } else if upper_next {
            out.extend(c.to_uppercase());
            upper_next = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `convertIdlToCamelCase` of `@coral-xyz/anchor`: camelCases the values of
/// `name`, `path`, `account`, `relations` and `generic`.
pub fn camel_case_idl(v: &J) -> J {
    const KEYS: [&str; 5] = ["name", "path", "account", "relations", "generic"];
    match v {
        J::O(fields) => J::O(
            fields
                .iter()
                .map(|(k, item)| {
                    let converted = match (KEYS.contains(&k.as_str()), item) {
                        (true, J::S(x)) => {
                            J::S(x.split('.').map(camel).collect::<Vec<_>>().join("."))
                        }
                        (true, J::A(xs)) => J::A(
                            xs.iter()
                                .map(|x| match x {
                                    J::S(x) => J::S(camel(x)),
                                    other => other.clone(),
                                })
                                .collect(),
                        ),
                        _ => camel_case_idl(item),
                    };
                    (k.clone(), converted)
                })
                .collect(),
        ),
        J::A(items) => J::A(items.iter().map(camel_case_idl).collect()),
        other => other.clone(),
    }
}

const SYSTEM_PROGRAM: &str = "11111111111111111111111111111111";

struct Acc {
    name: &'static str,
    writable: bool,
    signer: bool,
    docs: &'static str,
    address: Option<&'static str>,
    pda: Option<Vec<J>>,
}

fn acc(name: &'static str, writable: bool, signer: bool, docs: &'static str) -> Acc {
    Acc {
        name,
        writable,
        signer,
        docs,
        address: None,
        pda: None,
    }
}

fn acc_json(a: Acc) -> J {
    let mut f = vec![("name", s(a.name))];
    if !a.docs.is_empty() {
        f.push(("docs", J::A(vec![s(a.docs)])));
    }
    if a.writable {
        f.push(("writable", J::B(true)));
    }
    if a.signer {
        f.push(("signer", J::B(true)));
    }
    if let Some(addr) = a.address {
        f.push(("address", s(addr)));
    }
    if let Some(seeds) = a.pda {
        f.push(("pda", o(vec![("seeds", J::A(seeds))])));
    }
    o(f)
}

fn seed_const(v: &[u8]) -> J {
    o(vec![("kind", s("const")), ("value", bytes(v))])
}

fn seed_account(path: &str) -> J {
    o(vec![("kind", s("account")), ("path", s(path))])
}

fn seed_arg(path: &str) -> J {
    o(vec![("kind", s("arg")), ("path", s(path))])
}

fn field(name: &str, ty: J) -> J {
    o(vec![("name", s(name)), ("type", ty)])
}

fn array_u8_32() -> J {
    o(vec![("array", J::A(vec![s("u8"), J::N(32)]))])
}

fn instruction(name: &str, docs: &str, disc: [u8; 8], accounts: Vec<Acc>, args: Vec<J>) -> J {
    o(vec![
        ("name", s(name)),
        ("docs", J::A(vec![s(docs)])),
        ("discriminator", bytes(&disc)),
        (
            "accounts",
            J::A(accounts.into_iter().map(acc_json).collect()),
        ),
        ("args", J::A(args)),
    ])
}

fn system_program() -> Acc {
    Acc {
        address: Some(SYSTEM_PROGRAM),
        ..acc("system_program", false, false, "")
    }
}

/// The whole IDL. Field lists must follow the byte layouts in `state/` and
/// `events.rs`; the tests below check sizes against `LEN`.
pub fn idl() -> J {
    let instructions = vec![
        instruction(
            "execute_payout",
            "Pays `amount` from a merchant vault to `recipient_token` at most once per (merchant, op_id).",
            EXECUTE_PAYOUT,
            vec![
                acc("payout_authority", false, true, "The merchant's payout authority."),
                acc("payer", true, true, "Funds the operation account's rent."),
                acc("merchant", false, false, "Merchant config PDA [\"merchant\", merchant_authority]."),
                Acc {
                    pda: Some(vec![seed_const(OPERATION_SEED), seed_account("merchant"), seed_arg("op_id")]),
                    ..acc("operation", true, false, "Operation PDA [\"op\", merchant, op_id], created here.")
                },
                acc("vault", true, false, "Token account whose authority is the merchant PDA."),
                acc("mint", false, false, ""),
                acc("recipient_token", true, false, "Token account of `mint` that receives the payout."),
                acc("token_program", false, false, "SPL Token or Token-2022."),
                system_program(),
            ],
            vec![
                field("op_id", array_u8_32()),
                field("amount", s("u64")),
                field("op_bump", s("u8")),
            ],
        ),
        instruction(
            "initialize_merchant",
            "Creates the merchant config PDA. Vaults are any token accounts whose authority is that PDA.",
            INITIALIZE_MERCHANT,
            vec![
                acc("merchant_authority", false, true, ""),
                acc("payer", true, true, ""),
                Acc {
                    pda: Some(vec![seed_const(MERCHANT_SEED), seed_account("merchant_authority")]),
                    ..acc("merchant", true, false, "")
                },
                system_program(),
            ],
            vec![field("payout_authority", s("pubkey")), field("merchant_bump", s("u8"))],
        ),
        instruction(
            "set_paused",
            "Stops or resumes payouts (merchant authority only).",
            SET_PAUSED,
            vec![acc("merchant_authority", false, true, ""), acc("merchant", true, false, "")],
            vec![field("paused", s("bool"))],
        ),
        instruction(
            "set_payout_authority",
            "Replaces who may sign payouts (merchant authority only).",
            SET_PAYOUT_AUTHORITY,
            vec![acc("merchant_authority", false, true, ""), acc("merchant", true, false, "")],
            vec![field("new_payout_authority", s("pubkey"))],
        ),
    ];
    let accounts = vec![
        o(vec![
            ("name", s("Merchant")),
            ("discriminator", bytes(&Merchant::DISCRIMINATOR)),
        ]),
        o(vec![
            ("name", s("Operation")),
            ("discriminator", bytes(&Operation::DISCRIMINATOR)),
        ]),
    ];
    let events = vec![o(vec![
        ("name", s("PayoutExecuted")),
        ("discriminator", bytes(&PAYOUT_EXECUTED_DISCRIMINATOR)),
    ])];
    let errors = OncepayError::ALL
        .iter()
        .map(|e| {
            o(vec![
                ("code", J::N(*e as u64)),
                ("name", s(e.name())),
                ("msg", s(e.message())),
            ])
        })
        .collect();
    let struct_type = |name: &str, docs: &str, fields: Vec<J>| {
        o(vec![
            ("name", s(name)),
            ("docs", J::A(vec![s(docs)])),
            (
                "type",
                o(vec![("kind", s("struct")), ("fields", J::A(fields))]),
            ),
        ])
    };
    let types = vec![
        struct_type(
            "Merchant",
            "Merchant config at PDA [\"merchant\", merchant_authority].",
            vec![
                field("merchant_authority", s("pubkey")),
                field("payout_authority", s("pubkey")),
                field("paused", s("bool")),
                field("bump", s("u8")),
            ],
        ),
        struct_type(
            "Operation",
            "Record of one executed payout at PDA [\"op\", merchant, op_id]; never closed.",
            vec![
                field("op_id", array_u8_32()),
                field("merchant", s("pubkey")),
                field("recipient", s("pubkey")),
                field("mint", s("pubkey")),
                field("amount", s("u64")),
                field("slot", s("u64")),
                field("bump", s("u8")),
            ],
        ),
        struct_type(
            "PayoutExecuted",
            "Emitted by execute_payout.",
            vec![
                field("op_id", array_u8_32()),
                field("merchant", s("pubkey")),
                field("recipient", s("pubkey")),
                field("mint", s("pubkey")),
                field("amount", s("u64")),
                field("slot", s("u64")),
            ],
        ),
    ];
    o(vec![
        ("address", s(PROGRAM_ID_BASE58)),
        (
            "metadata",
            o(vec![
                ("name", s("oncepay")),
                ("version", s(env!("CARGO_PKG_VERSION"))),
                ("spec", s("0.1.0")),
                (
                    "description",
                    s("Pays each payout operation id at most once"),
                ),
            ]),
        ),
        ("instructions", J::A(instructions)),
        ("accounts", J::A(accounts)),
        ("events", J::A(events)),
        ("errors", J::A(errors)),
        ("types", J::A(types)),
    ])
}

/// `idl/oncepay.json` contents.
pub fn idl_json() -> String {
    let mut out = String::new();
    to_json(&idl(), 0, &mut out);
    out.push('\n');
    out
}

/// `idl/oncepay.ts` contents (what `anchor build` writes to
/// `target/types/oncepay.ts`).
pub fn idl_ts() -> String {
    let mut body = String::new();
    to_json(&camel_case_idl(&idl()), 0, &mut body);
    format!(
        "/**\n * Program IDL in camelCase format in order to be used in JS/TS.\n *\n * Note that this is only a type helper and is not the actual IDL. The original\n * IDL can be found at `target/idl/oncepay.json`.\n *\n * Generated from programs/oncepay (src/idl.rs); do not edit.\n */\nexport type Oncepay = {};\n",
        body
    )
}

#[cfg(test)]
mod tests {
    use {
        super::*,
        sha2::Digest,
        std::{fs, path::PathBuf},
    };

    fn repo_root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn committed_idl_matches_a_fresh_generation() {
        let root = repo_root();
        let (json, ts) = (idl_json(), idl_ts());
        // target/ holds build outputs where `anchor build` puts them: always
        // refreshed. idl/ is committed: rewritten only when asked.
        let mut outputs = vec![
            ("target/idl", "oncepay.json", &json),
            ("target/types", "oncepay.ts", &ts),
        ];
        if std::env::var("ONCEPAY_WRITE_IDL").is_ok() {
            outputs.extend([("idl", "oncepay.json", &json), ("idl", "oncepay.ts", &ts)]);
        }
        for (dir, name, text) in outputs {
            fs::create_dir_all(root.join(dir)).unwrap();
            fs::write(root.join(dir).join(name), text).unwrap();
        }
        let committed_json = fs::read_to_string(root.join("idl/oncepay.json")).unwrap_or_default();
        let committed_ts = fs::read_to_string(root.join("idl/oncepay.ts")).unwrap_or_default();
        assert!(
            committed_json == json && committed_ts == ts,
            "idl/oncepay.json or idl/oncepay.ts is stale: run programs/oncepay-lite/idl.sh"
        );
    }

    fn sha(preimage: &str) -> [u8; 8] {
        let h = sha2::Sha256::digest(preimage.as_bytes());
        h[..8].try_into().unwrap()
    }

    #[test]
    fn discriminators_are_anchors() {
        assert_eq!(EXECUTE_PAYOUT, sha("global:execute_payout"));
        assert_eq!(INITIALIZE_MERCHANT, sha("global:initialize_merchant"));
        assert_eq!(SET_PAUSED, sha("global:set_paused"));
        assert_eq!(SET_PAYOUT_AUTHORITY, sha("global:set_payout_authority"));
        assert_eq!(Merchant::DISCRIMINATOR, sha("account:Merchant"));
        assert_eq!(Operation::DISCRIMINATOR, sha("account:Operation"));
        assert_eq!(PAYOUT_EXECUTED_DISCRIMINATOR, sha("event:PayoutExecuted"));
    }

    #[test]
    fn idl_entries_carry_the_programs_own_discriminators_and_codes() {
        let J::O(top) = idl() else { panic!() };
        let get = |k: &str| top.iter().find(|(n, _)| n == k).unwrap().1.clone();
        let J::A(ixs) = get("instructions") else {
            panic!()
        };
        for ix in ixs {
            let J::O(f) = ix else { panic!() };
            let J::S(name) = &f[0].1 else { panic!() };
            let J::A(disc) = &f.iter().find(|(k, _)| k == "discriminator").unwrap().1 else {
                panic!()
            };
            let disc: Vec<u8> = disc
                .iter()
                .map(|d| if let J::N(n) = d { *n as u8 } else { 0 })
                .collect();
            assert_eq!(disc, sha(&format!("global:{name}")), "{name}");
        }
        let J::A(errors) = get("errors") else {
            panic!()
        };
        assert_eq!(errors.len(), OncepayError::ALL.len());
        for (e, want) in errors.iter().zip(OncepayError::ALL) {
            let J::O(f) = e else { panic!() };
            assert!(matches!(f[0].1, J::N(c) if c == want as u64));
            assert!(matches!(&f[1].1, J::S(n) if n == want.name()));
        }
    }

    #[test]
    fn layouts_match_the_idl_types() {
        // Borsh sizes of the IDL fields + 8-byte discriminator.
        assert_eq!(Merchant::LEN, 8 + 32 + 32 + 1 + 1);
        assert_eq!(Operation::LEN, 8 + 32 + 32 * 3 + 8 + 8 + 1);
        assert_eq!(crate::events::PAYOUT_EXECUTED_LEN, 8 + 32 * 4 + 8 + 8);
    }

    #[test]
    fn camel_case_follows_anchor() {
        assert_eq!(camel("execute_payout"), "executePayout");
        assert_eq!(camel("PayoutExecuted"), "payoutExecuted");
        assert_eq!(camel("op_id"), "opId");
    }
}
