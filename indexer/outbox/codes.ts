// Error codes of the outbox. Stable: never remove, rename or reuse one.
export const OUTBOX_CODES = {
  /** No webhook URL for the merchant (no webhook_endpoints row and no --url). The attempt fails and is retried. */
  NO_TARGET: 'ONCEPAY__OUTBOX__NO_TARGET',
  /** No HMAC secret for the merchant (no webhook_endpoints row and no --secret / ONCEPAY_WEBHOOK_SECRET). */
  NO_SECRET: 'ONCEPAY__OUTBOX__NO_SECRET',
  /** `outbox replay` named a row that does not exist or is not dead. */
  NOT_DEAD: 'ONCEPAY__OUTBOX__NOT_DEAD',
  /** Logged when a row used its last attempt and became a dead letter (`outbox replay` re-queues it). */
  DEAD_LETTER: 'ONCEPAY__OUTBOX__DEAD_LETTER',
  /** A worker option is out of range. */
  INVALID_OPTION: 'ONCEPAY__OUTBOX__INVALID_OPTION',
} as const;
