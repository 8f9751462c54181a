// Error codes of the merchant lifecycle, vaults and exceptions. Stable: never remove, rename or reuse one.
export const MERCHANT_CODES = {
  /** The account at the merchant PDA is not an oncepay merchant config (wrong owner, size or discriminator). */
  ACCOUNT_MALFORMED: 'ONCEPAY__MERCHANT__ACCOUNT_MALFORMED',
  /** No merchant config exists at the PDA of this authority: run `oncepay merchant init` first. */
  NOT_INITIALIZED: 'ONCEPAY__MERCHANT__NOT_INITIALIZED',
  /** A transaction landed with an error (the program's named error is in the message). */
  TRANSACTION_FAILED: 'ONCEPAY__MERCHANT__TRANSACTION_FAILED',
  /** A transaction was not seen confirmed before its blockhash expired (nothing changed on-chain). */
  TRANSACTION_EXPIRED: 'ONCEPAY__MERCHANT__TRANSACTION_EXPIRED',
  /** The signer is not the merchant authority stored in the config. */
  AUTHORITY_MISMATCH: 'ONCEPAY__MERCHANT__AUTHORITY_MISMATCH',
} as const;

export const KEYPAIR_CODES = {
  /** A keypair file is readable by group or others (chmod 600 it). */
  PERMISSIONS_TOO_OPEN: 'ONCEPAY__KEYPAIR__PERMISSIONS_TOO_OPEN',
} as const;
