// Error codes of the OncePay object itself. Stable: never remove, rename or reuse one.
export const SDK_CODES = {
  /** An on-chain call on an OncePay made without rpcUrl / connection. */
  RPC_MISSING: 'ONCEPAY__SDK__RPC_MISSING',
} as const;
