// Error codes of vault commands. Stable: never remove, rename or reuse one. (What `vault check` finds are
// findings, named in assess.ts, not errors.)
export const VAULT_CODES = {
  /** The mint address holds no account, or an account that no token program owns. */
  MINT_INVALID: 'ONCEPAY__VAULT__MINT_INVALID',
  /** The vault address holds no account. */
  NOT_FOUND: 'ONCEPAY__VAULT__NOT_FOUND',
  /** The vault address holds an account that is not a token account. */
  NOT_TOKEN_ACCOUNT: 'ONCEPAY__VAULT__NOT_TOKEN_ACCOUNT',
} as const;
