// Error codes of the ledger. Stable: never remove, rename or reuse one.
export const LEDGER_CODES = {
  /** A receipt lacks a field, or a field is out of range (amount above u64, negative index…); it is skipped. */
  INVALID_RECEIPT: 'ONCEPAY__LEDGER__INVALID_RECEIPT',
  /** `source` is not one of scanner | backfill | webhook | file. */
  INVALID_SOURCE: 'ONCEPAY__LEDGER__INVALID_SOURCE',
  /** `cluster` is empty. */
  INVALID_CLUSTER: 'ONCEPAY__LEDGER__INVALID_CLUSTER',
  /** An invoice's fields are malformed (amount not a positive u64, neither deposit address nor reference…). */
  INVALID_INVOICE: 'ONCEPAY__LEDGER__INVALID_INVOICE',
  /** An invoice with this id (or reference key) already exists with different fields. */
  INVOICE_CONFLICT: 'ONCEPAY__LEDGER__INVOICE_CONFLICT',
  /** A checkpoint slot is not a non-negative integer. */
  INVALID_CHECKPOINT: 'ONCEPAY__LEDGER__INVALID_CHECKPOINT',
  /** The ledger's tables are not in the database (or schema): run `oncepay migrate` first. */
  SCHEMA_MISSING: 'ONCEPAY__LEDGER__SCHEMA_MISSING',
} as const;

export type LedgerCode = (typeof LEDGER_CODES)[keyof typeof LEDGER_CODES];
