// Error codes of the JSON-RPC client. Never reuse, rename or reorder a code.
export const RPC_HTTP_STATUS = 'ONCEPAY__RPC__HTTP_STATUS';
export const RPC_TIMEOUT = 'ONCEPAY__RPC__TIMEOUT';
export const RPC_NETWORK = 'ONCEPAY__RPC__NETWORK';
export const RPC_MALFORMED_RESPONSE = 'ONCEPAY__RPC__MALFORMED_RESPONSE';
export const RPC_ERROR_RESPONSE = 'ONCEPAY__RPC__ERROR_RESPONSE';
export const RPC_RETRIES_EXHAUSTED = 'ONCEPAY__RPC__RETRIES_EXHAUSTED';
export const RPC_ABORTED = 'ONCEPAY__RPC__ABORTED';

/** Solana JSON-RPC server error codes we treat specially (solana rpc-client-api `custom_error.rs`). */
export const SOLANA_RPC = {
  BLOCK_CLEANED_UP: -32001,
  BLOCK_NOT_AVAILABLE: -32004,
  NODE_UNHEALTHY: -32005,
  SLOT_SKIPPED: -32007,
  LONG_TERM_STORAGE_SLOT_SKIPPED: -32009,
  BLOCK_STATUS_NOT_AVAILABLE_YET: -32014,
  LONG_TERM_STORAGE_UNREACHABLE: -32019,
} as const;
