// A JSON-RPC error with the real node's code, message and data. A class only because it is an error.
// Not an OncepayError: it is the answer a real Solana node gives (its numeric code is the node's), not one of ours.
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
  }
}

// The codes a real Agave node uses (rpc-client-api custom_error.rs + JSON-RPC standard ones).
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL: -32603,
  BLOCK_CLEANED_UP: -32001,
  SEND_TRANSACTION_PREFLIGHT_FAILURE: -32002,
  TRANSACTION_SIGNATURE_VERIFICATION_FAILURE: -32003,
  BLOCK_NOT_AVAILABLE: -32004,
  SLOT_SKIPPED: -32007,
  LONG_TERM_STORAGE_SLOT_SKIPPED: -32009,
  UNSUPPORTED_TRANSACTION_VERSION: -32015,
} as const;

export function invalidParams(message: string): RpcError {
  return new RpcError(RPC.INVALID_PARAMS, message);
}
