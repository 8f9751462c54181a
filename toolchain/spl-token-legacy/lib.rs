// Empty: this crate only pins solana-program-binaries (see Cargo.toml).
