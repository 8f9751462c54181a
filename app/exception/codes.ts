// Error codes of exception refunds and resolutions. Stable: never remove, rename or reuse one.
export const EXCEPTION_CODES = {
  NOT_FOUND: 'ONCEPAY__EXCEPTION__NOT_FOUND',
  /** The exception was closed with `exception resolve`: it will not be refunded. */
  ALREADY_RESOLVED: 'ONCEPAY__EXCEPTION__ALREADY_RESOLVED',
  /** The exception already has a refund payout (resolve refuses; refund reports it). */
  ALREADY_REFUNDED: 'ONCEPAY__EXCEPTION__ALREADY_REFUNDED',
  /** A refund exists for this receipt with other terms (another --to): the first one stands, nothing is paid twice. */
  REFUND_TERMS_DIFFER: 'ONCEPAY__EXCEPTION__REFUND_TERMS_DIFFER',
  /** Native SOL or an unknown mint: the payout program moves SPL tokens only. */
  REFUND_UNSUPPORTED: 'ONCEPAY__EXCEPTION__REFUND_UNSUPPORTED',
  /** No registered merchant holds the vault the money went to: name one with --merchant. */
  MERCHANT_UNKNOWN: 'ONCEPAY__EXCEPTION__MERCHANT_UNKNOWN',
  /** `resolve` needs a non-empty note saying why. */
  NOTE_MISSING: 'ONCEPAY__EXCEPTION__NOTE_MISSING',
  /** `--kind` is not an exception kind. */
  KIND_INVALID: 'ONCEPAY__EXCEPTION__KIND_INVALID',
} as const;
