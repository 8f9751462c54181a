// What `vault check` can find, by name. No token-library types here: the SDK's public declarations use these.
/** `danger`: someone other than the program can move or lock the vault's funds, or payouts cannot work. */
export type FindingSeverity = 'danger' | 'warning';

export interface VaultFinding {
  code: string;
  severity: FindingSeverity;
  /** What it means for the merchant, in one sentence. */
  meaning: string;
  /** The account holding the power (delegate, authority, hook program), when there is one. */
  holder?: string;
}

export const FINDINGS = {
  VAULT_OWNER_NOT_MERCHANT: 'VAULT_OWNER_NOT_MERCHANT',
  VAULT_MINT_MISMATCH: 'VAULT_MINT_MISMATCH',
  VAULT_DELEGATE: 'VAULT_DELEGATE',
  VAULT_CLOSE_AUTHORITY: 'VAULT_CLOSE_AUTHORITY',
  VAULT_FROZEN: 'VAULT_FROZEN',
  MINT_PERMANENT_DELEGATE: 'MINT_PERMANENT_DELEGATE',
  MINT_TRANSFER_FEE: 'MINT_TRANSFER_FEE',
  MINT_TRANSFER_HOOK: 'MINT_TRANSFER_HOOK',
  MINT_DEFAULT_FROZEN: 'MINT_DEFAULT_FROZEN',
  MINT_FREEZE_AUTHORITY: 'MINT_FREEZE_AUTHORITY',
  MINT_PAUSABLE: 'MINT_PAUSABLE',
  MINT_NON_TRANSFERABLE: 'MINT_NON_TRANSFERABLE',
} as const;
