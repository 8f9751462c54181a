// What a vault and its mint mean for the merchant's payouts, from their decoded state alone (pure). Every finding
// says what it lets someone do, or what it does to a payout.
import { PublicKey } from '@solana/web3.js';
import { FINDINGS, VaultFinding } from './findings';
import {
  Account,
  AccountState,
  ExtensionType,
  Mint,
  getDefaultAccountState,
  getExtensionTypes,
  getPausableConfig,
  getPermanentDelegate,
  getTransferFeeConfig,
  getTransferHook,
} from '@solana/spl-token';

/** Findings about the mint alone (they apply to every vault of that mint). */
export function assessMint(mint: Mint): VaultFinding[] {
  const out: VaultFinding[] = [];
  const types = new Set(getExtensionTypes(mint.tlvData));
  const delegate = getPermanentDelegate(mint);
  if (delegate && !delegate.delegate.equals(PublicKey.default)) {
    out.push({
      code: FINDINGS.MINT_PERMANENT_DELEGATE,
      severity: 'danger',
      holder: delegate.delegate.toBase58(),
      meaning:
        "the permanent delegate can transfer or burn the vault's tokens at any time, without the program or the merchant",
    });
  }
  const fee = getTransferFeeConfig(mint);
  if (fee && (fee.newerTransferFee.transferFeeBasisPoints > 0 || fee.olderTransferFee.transferFeeBasisPoints > 0)) {
    const f = fee.newerTransferFee;
    out.push({
      code: FINDINGS.MINT_TRANSFER_FEE,
      severity: 'warning',
      holder: fee.transferFeeConfigAuthority.equals(PublicKey.default)
        ? undefined
        : fee.transferFeeConfigAuthority.toBase58(),
      meaning: `every transfer withholds a fee (${f.transferFeeBasisPoints} bps, at most ${f.maximumFee} base units from epoch ${f.epoch}): the recipient receives less than the payout amount, while the op account records the full amount`,
    });
  }
  const hook = getTransferHook(mint);
  if (hook && !hook.programId.equals(PublicKey.default)) {
    out.push({
      code: FINDINGS.MINT_TRANSFER_HOOK,
      severity: 'danger',
      holder: hook.programId.toBase58(),
      meaning:
        'transfers call a hook program whose extra accounts the oncepay program does not forward: payouts in this mint fail',
    });
  }
  const state = getDefaultAccountState(mint);
  if (state && state.state === AccountState.Frozen) {
    out.push({
      code: FINDINGS.MINT_DEFAULT_FROZEN,
      severity: 'warning',
      meaning:
        'new token accounts of this mint start frozen: a payout to a recipient account (or from a vault) not yet thawed by the freeze authority fails',
    });
  }
  if (mint.freezeAuthority) {
    out.push({
      code: FINDINGS.MINT_FREEZE_AUTHORITY,
      severity: 'warning',
      holder: mint.freezeAuthority.toBase58(),
      meaning:
        "the freeze authority can freeze the vault (every payout fails until it thaws it) or any recipient's account",
    });
  }
  const pausable = getPausableConfig(mint);
  if (pausable) {
    out.push({
      code: FINDINGS.MINT_PAUSABLE,
      severity: pausable.paused ? 'danger' : 'warning',
      holder: pausable.authority.toBase58(),
      meaning: `the pause authority can stop every transfer of this mint${pausable.paused ? ' — and has: payouts fail now' : ''}`,
    });
  }
  if (types.has(ExtensionType.NonTransferable)) {
    out.push({
      code: FINDINGS.MINT_NON_TRANSFERABLE,
      severity: 'danger',
      meaning: 'tokens of this mint cannot be transferred: payouts fail',
    });
  }
  return out;
}

/** Findings about one vault (a token account that should belong to the merchant PDA) and its mint. */
export function assessVault(vault: Account, mint: Mint, merchant: PublicKey): VaultFinding[] {
  const out: VaultFinding[] = [];
  if (!vault.owner.equals(merchant)) {
    out.push({
      code: FINDINGS.VAULT_OWNER_NOT_MERCHANT,
      severity: 'danger',
      holder: vault.owner.toBase58(),
      meaning: `the account's owner is not the merchant PDA ${merchant.toBase58()}: the program refuses to pay from it (InvalidVault), and its owner can move its funds`,
    });
  }
  if (!vault.mint.equals(mint.address)) {
    out.push({
      code: FINDINGS.VAULT_MINT_MISMATCH,
      severity: 'danger',
      meaning: `the vault holds mint ${vault.mint.toBase58()}, not ${mint.address.toBase58()}: payouts in that mint fail (MintMismatch)`,
    });
  }
  if (vault.delegate && vault.delegatedAmount > 0n) {
    out.push({
      code: FINDINGS.VAULT_DELEGATE,
      severity: 'danger',
      holder: vault.delegate.toBase58(),
      meaning: `the delegate can transfer up to ${vault.delegatedAmount} base units out of the vault without the program`,
    });
  }
  if (vault.closeAuthority) {
    out.push({
      code: FINDINGS.VAULT_CLOSE_AUTHORITY,
      severity: 'warning',
      holder: vault.closeAuthority.toBase58(),
      meaning:
        'the close authority can close the vault once it is empty and take its rent; payouts then fail until a new vault is created and registered',
    });
  }
  if (vault.isFrozen) {
    out.push({
      code: FINDINGS.VAULT_FROZEN,
      severity: 'danger',
      meaning: 'the vault is frozen: every payout from it fails until the freeze authority thaws it',
    });
  }
  return [...out, ...assessMint(mint)];
}
