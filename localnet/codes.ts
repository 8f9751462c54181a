// Error codes of the localnet part. Never reuse, rename or reorder a code.
export const LOCALNET_CODES = {
  /** The transaction bytes are not a Solana wire transaction. */
  MALFORMED_TRANSACTION: 'ONCEPAY__LOCALNET__MALFORMED_TRANSACTION',
  /** An address lookup table the v0 transaction names is missing or not a lookup table. */
  LOOKUP_TABLE_NOT_FOUND: 'ONCEPAY__LOCALNET__LOOKUP_TABLE_NOT_FOUND',
  /** The ledger folder holds data this version cannot read. */
  LEDGER_CORRUPT: 'ONCEPAY__LOCALNET__LEDGER_CORRUPT',
  /** A program file given with --program cannot be loaded. */
  PROGRAM_LOAD_FAILED: 'ONCEPAY__LOCALNET__PROGRAM_LOAD_FAILED',
  /** A command-line or handle option is out of range. */
  INVALID_OPTION: 'ONCEPAY__LOCALNET__INVALID_OPTION',
} as const;
