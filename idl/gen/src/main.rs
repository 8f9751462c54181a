//! Writes the Anchor IDL of programs/oncepay and its TypeScript type, the two
//! files `anchor build` writes to `target/idl/` and `target/types/`.
//!
//! The IDL is anchor-lang's own (`idl-build`): `IdlBuilder` runs the
//! program's `__anchor_private_print_idl` test and assembles what it prints,
//! as `anchor idl build` does, plus the account types the program creates
//! through an `UncheckedAccount` (Anchor lists only `Account<T>` fields;
//! their entries are Anchor's own `IdlBuild` output, printed by a program
//! test). The type file follows `anchor build`'s rule:
//! the same IDL with names in camelCase (what `@coral-xyz/anchor`'s
//! `Program<T>` expects), pubkeys left alone.
//!
//! Usage: `cargo run --release --manifest-path idl/gen/Cargo.toml -- [OUT_DIR]`
//! (default: the repository's `idl/`).

use {
    anchor_lang_idl::{
        build::IdlBuilder,
        types::{Idl, IdlAccount, IdlTypeDef},
    },
    anyhow::{bail, Context, Result},
    heck::{CamelCase, MixedCase},
    serde_json::Value,
    std::{
        collections::BTreeSet,
        fs,
        path::{Path, PathBuf},
        process::{Command, Stdio},
    },
};

fn main() -> Result<()> {
    // rustup's cargo sets RUSTUP_TOOLCHAIN for what it runs; IdlBuilder then
    // runs `rustup toolchain install <it>` (which updates the machine's
    // toolchain from the network) and passes a broken `+{toolchain}` to
    // cargo. Without it, the nested cargo uses the toolchain in effect.
    std::env::remove_var("RUSTUP_TOOLCHAIN");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut args = std::env::args().skip(1);
    let out_dir = match (args.next(), args.next()) {
        (None, _) => repo.join("idl"),
        (Some(a), None) if a == "--help" || a == "-h" => {
            println!("usage: oncepay-idl-gen [OUT_DIR]  (writes OUT_DIR/oncepay.json and OUT_DIR/oncepay.ts; default idl/)");
            return Ok(());
        }
        (Some(dir), None) => PathBuf::from(dir),
        _ => bail!("usage: oncepay-idl-gen [OUT_DIR]"),
    };
    let program = repo.join("programs/oncepay");
    // The program's host build (also used by its unit tests, see
    // scripts/test.sh) lives apart from the SBF build.
    let target_dir = repo.join("target/host");
    let program = program.canonicalize().context("programs/oncepay")?;
    let mut idl = IdlBuilder::new()
        .program_path(program.clone())
        .cargo_args(vec![
            "--target-dir".into(),
            target_dir.to_string_lossy().into_owned(),
        ])
        .build()
        .context("anchor-lang idl-build of programs/oncepay")?;
    for (account, ty) in unlisted_accounts(&program, &target_dir)? {
        add_account(&mut idl, account, ty);
    }
    fs::create_dir_all(&out_dir)?;
    let name = idl.metadata.name.clone();
    fs::write(
        out_dir.join(format!("{name}.json")),
        serde_json::to_string_pretty(&idl)? + "\n",
    )?;
    fs::write(out_dir.join(format!("{name}.ts")), type_file(&idl)?)?;
    eprintln!(
        "idl: wrote {0}/{name}.json and {0}/{name}.ts",
        out_dir.display()
    );
    Ok(())
}

/// Account types the program creates without taking them as `Account<T>`
/// (so idl-build does not list them), as Anchor's own `IdlBuild` prints them
/// from the program's `__oncepay_print_idl_unlisted_accounts` test. Same
/// cargo settings as `IdlBuilder`'s run, so nothing is recompiled.
fn unlisted_accounts(program: &Path, target_dir: &Path) -> Result<Vec<(IdlAccount, IdlTypeDef)>> {
    let out = Command::new("cargo")
        .args([
            "test",
            "__oncepay_print_idl_unlisted_accounts",
            "--features",
            "idl-build",
            "--target-dir",
        ])
        .arg(target_dir)
        .args(["--", "--show-output", "--quiet"])
        .env("ANCHOR_IDL_BUILD_NO_DOCS", "FALSE")
        .env("ANCHOR_IDL_BUILD_RESOLUTION", "TRUE")
        .env("ANCHOR_IDL_BUILD_SKIP_LINT", "FALSE")
        .env("ANCHOR_IDL_BUILD_PROGRAM_PATH", program)
        .env("RUSTFLAGS", "-A warnings")
        .current_dir(program)
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        bail!("cargo test __oncepay_print_idl_unlisted_accounts failed");
    }
    let stdout = String::from_utf8(out.stdout)?;
    let mut found = Vec::new();
    let mut lines = stdout.lines();
    while let Some(line) = lines.next() {
        if line == "--- oncepay unlisted account ---" {
            let json = lines.next().context("unlisted account: no JSON line")?;
            found.push(serde_json::from_str(json)?);
        }
    }
    if found.is_empty() {
        bail!("the program printed no unlisted account (expected Operation)");
    }
    Ok(found)
}

/// Adds an account and its type, by name, keeping both lists sorted by name
/// (as `IdlBuilder` leaves them); a module path is reduced to the name, as
/// `IdlBuilder` does when there is no conflict.
fn add_account(idl: &mut Idl, mut account: IdlAccount, mut ty: IdlTypeDef) {
    let short = |name: &str| name.rsplit("::").next().unwrap_or(name).to_owned();
    account.name = short(&account.name);
    ty.name = short(&ty.name);
    if !idl.accounts.iter().any(|a| a.name == account.name) {
        idl.accounts.push(account);
        idl.accounts.sort_by(|a, b| a.name.cmp(&b.name));
    }
    if !idl.types.iter().any(|t| t.name == ty.name) {
        idl.types.push(ty);
        idl.types.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

/// The `target/types/<name>.ts` file of `anchor build`: the IDL with every
/// name (a string value made of word characters that is not a pubkey) in
/// lowerCamelCase, wherever that string occurs as a value. One difference
/// from anchor-cli's regex: a dotted seed path (`merchant.merchant_authority`)
/// is converted part by part, as `@coral-xyz/anchor`'s `convertIdlToCamelCase`
/// does at run time, so the type says what `Program<T>` really holds.
fn type_file(idl: &Idl) -> Result<String> {
    let mut value = serde_json::to_value(idl)?;
    let mut names = BTreeSet::new();
    collect_names(&value, &mut names);
    camel_case_values(&mut value, &names);
    let camel: Idl = serde_json::from_value(value)?;
    let type_name = idl.metadata.name.to_camel_case();
    Ok(format!(
        "/**\n * Program IDL in camelCase format in order to be used in JS/TS.\n *\n * Note that this is only a type helper and is not the actual IDL. The original\n * IDL can be found at `idl/{}.json` (`target/idl/` after `anchor build`).\n *\n * Generated from programs/oncepay by idl/gen; do not edit.\n */\nexport type {} = {};\n",
        idl.metadata.name,
        type_name,
        serde_json::to_string_pretty(&camel)?
    ))
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

fn camel(s: &str) -> String {
    s.split('.')
        .map(|part| part.to_mixed_case())
        .collect::<Vec<_>>()
        .join(".")
}

fn is_pubkey(s: &str) -> bool {
    bs58::decode(s)
        .into_vec()
        .map(|b| b.len() == 32)
        .unwrap_or(false)
}

/// Names: string values of object members (not array items), as `anchor
/// build` matches them.
fn collect_names(v: &Value, names: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for member in map.values() {
                match member {
                    Value::String(s) if is_name(s) && !is_pubkey(s) => {
                        names.insert(s.clone());
                    }
                    other => collect_names(other, names),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_names(i, names)),
        _ => {}
    }
}

fn camel_case_values(v: &mut Value, names: &BTreeSet<String>) {
    match v {
        Value::String(s) if names.contains(s.as_str()) => *s = camel(s),
        Value::Object(map) => map.values_mut().for_each(|m| camel_case_values(m, names)),
        Value::Array(items) => items.iter_mut().for_each(|i| camel_case_values(i, names)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_cases_names_but_not_pubkeys_or_sentences() {
        let mut v = serde_json::json!({
            "name": "execute_payout",
            "address": "11111111111111111111111111111111",
            "docs": ["Pays once.", "execute_payout"],
            "type": "u64",
            "path": "merchant.merchant_authority",
        });
        let mut names = BTreeSet::new();
        collect_names(&v, &mut names);
        camel_case_values(&mut v, &names);
        assert_eq!(v["name"], "executePayout");
        assert_eq!(v["address"], "11111111111111111111111111111111");
        assert_eq!(v["docs"][0], "Pays once.");
        assert_eq!(v["docs"][1], "executePayout");
        assert_eq!(v["type"], "u64");
        assert_eq!(v["path"], "merchant.merchantAuthority");
    }
}
