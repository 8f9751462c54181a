// Error codes of the decoder. Stable: never remove, rename or reuse one.
export const DECODE_CODES = {
  /** Input text is not JSON / JSON lines; context has line, column, position. */
  MALFORMED_JSON: 'ONCEPAY__DECODE__MALFORMED_JSON',
  /** An RPC envelope carried `error` instead of `result`. */
  RPC_ERROR: 'ONCEPAY__DECODE__RPC_ERROR',
  /** An RPC envelope carried `result: null` (transaction not found / not yet confirmed). */
  TRANSACTION_NOT_FOUND: 'ONCEPAY__DECODE__TRANSACTION_NOT_FOUND',
  /** A transaction object lacks or mistypes a field the decoder needs. */
  MALFORMED_TRANSACTION: 'ONCEPAY__DECODE__MALFORMED_TRANSACTION',
  /** `meta` is null: success or failure cannot be told, so nothing may be credited. */
  MISSING_META: 'ONCEPAY__DECODE__MISSING_META',
  /** `version` is neither absent, "legacy" nor 0. */
  UNSUPPORTED_VERSION: 'ONCEPAY__DECODE__UNSUPPORTED_VERSION',
  /** `transaction` is in an encoding other than json, jsonParsed, base64 or base58. */
  UNSUPPORTED_ENCODING: 'ONCEPAY__DECODE__UNSUPPORTED_ENCODING',
  /** A transfer instruction's data or accounts do not fit its layout. */
  MALFORMED_INSTRUCTION: 'ONCEPAY__DECODE__MALFORMED_INSTRUCTION',
  /** An amount is negative, above u64::MAX, not an integer, or a fee exceeds its amount. */
  AMOUNT_OUT_OF_RANGE: 'ONCEPAY__DECODE__AMOUNT_OUT_OF_RANGE',
  /** A JSON number amount above 2^53 − 1 reached us already rounded by JSON.parse. */
  AMOUNT_IMPRECISE: 'ONCEPAY__DECODE__AMOUNT_IMPRECISE',
  /** A getBlock result has no `transactions` array (e.g. fetched with transactionDetails other than "full"). */
  MALFORMED_BLOCK: 'ONCEPAY__DECODE__MALFORMED_BLOCK',
  /** A decoded token transfer disagrees with the transaction's own pre/post token balances (balance-check.ts). */
  BALANCE_MISMATCH: 'ONCEPAY__DECODE__BALANCE_MISMATCH',
} as const;

export type DecodeCode = (typeof DECODE_CODES)[keyof typeof DECODE_CODES];
