// Error codes of the indexer sources (scanner, backfill, webhook). Never reuse, rename or reorder a code.
export const SOURCE_CODES = {
  /** A block the node returned could not be decoded: the checkpoint stops before its slot. */
  BLOCK_UNDECODABLE: 'ONCEPAY__SOURCE__BLOCK_UNDECODABLE',
  /** The node cannot serve a block (yet): the checkpoint stops before its slot, the next pass retries. */
  BLOCK_NOT_AVAILABLE: 'ONCEPAY__SOURCE__BLOCK_NOT_AVAILABLE',
  /** Fetching a block failed after every retry. */
  BLOCK_FETCH_FAILED: 'ONCEPAY__SOURCE__BLOCK_FETCH_FAILED',
  /** A CLI option has an invalid value. */
  INVALID_OPTION: 'ONCEPAY__SOURCE__INVALID_OPTION',
  /** A commitment the command does not offer (backfill reads finalized blocks only). */
  COMMITMENT_UNSUPPORTED: 'ONCEPAY__SOURCE__COMMITMENT_UNSUPPORTED',
  /** Backfill finished with slots it could not process (listed in the error context). */
  BACKFILL_INCOMPLETE: 'ONCEPAY__SOURCE__BACKFILL_INCOMPLETE',
} as const;

/** Webhook rejection reasons: the `code` of a 4xx body and the `reason` of a dead-letter row. */
export const WEBHOOK_CODES = {
  UNAUTHORIZED: 'ONCEPAY__WEBHOOK__UNAUTHORIZED',
  BODY_TOO_LARGE: 'ONCEPAY__WEBHOOK__BODY_TOO_LARGE',
  MALFORMED_JSON: 'ONCEPAY__WEBHOOK__MALFORMED_JSON',
  UNSUPPORTED_SHAPE: 'ONCEPAY__WEBHOOK__UNSUPPORTED_SHAPE',
  MALFORMED_TRANSACTION: 'ONCEPAY__WEBHOOK__MALFORMED_TRANSACTION',
  /** The ledger refused a receipt decoded from an item (its code is in the dead letter's detail). */
  RECEIPT_REJECTED: 'ONCEPAY__WEBHOOK__RECEIPT_REJECTED',
  INVALID_EVENT_ID: 'ONCEPAY__WEBHOOK__INVALID_EVENT_ID',
  UNSUPPORTED_MEDIA_TYPE: 'ONCEPAY__WEBHOOK__UNSUPPORTED_MEDIA_TYPE',
  NOT_FOUND: 'ONCEPAY__WEBHOOK__NOT_FOUND',
  INVALID_REQUEST: 'ONCEPAY__WEBHOOK__INVALID_REQUEST',
  INTERNAL: 'ONCEPAY__WEBHOOK__INTERNAL',
  /** A genuine signature whose `t=` is outside the tolerance window: a replayed (or badly clocked) delivery. */
  TIMESTAMP_OUTSIDE_WINDOW: 'ONCEPAY__WEBHOOK__TIMESTAMP_OUTSIDE_WINDOW',
  /** A transaction whose decoded transfers disagree with its own token balances (ONCEPAY__DECODE__BALANCE_MISMATCH). */
  BALANCE_MISMATCH: 'ONCEPAY__WEBHOOK__BALANCE_MISMATCH',
  /** The chain's own answer for a signature a delivery named could not be decoded (dead letter origin 'chain'). */
  CHAIN_TRANSACTION_REFUSED: 'ONCEPAY__WEBHOOK__CHAIN_TRANSACTION_REFUSED',
} as const;
