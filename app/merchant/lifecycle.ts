// The merchant's on-chain lifecycle: create the config (idempotently), read it, pause / unpause, rotate the payout
// authority. Each function reads the chain first and reports what it found, so running it twice is harmless.
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import {
  initializeMerchantInstruction,
  merchantAddress,
  setPausedInstruction,
  setPayoutAuthorityInstruction,
} from './instructions';
import { Address, address } from '../types';
import { MerchantAccount, decodeMerchantAccount } from './account';
import { MERCHANT_CODES } from '../../common/errors/codes';
import { SendOptions, TransactionFailed, sendAndConfirm } from './send';

export interface MerchantChain {
  connection: Connection;
  programId: PublicKey;
  send?: SendOptions;
}

/** The merchant config at `merchant`, or null when no account exists there. */
export async function readMerchantAccount(
  c: MerchantChain,
  merchant: PublicKey | string,
): Promise<MerchantAccount | null> {
  const key = new PublicKey(merchant);
  const info = await c.connection.getAccountInfo(key, c.send?.commitment ?? 'confirmed');
  if (!info) return null;
  if (!info.owner.equals(c.programId)) {
    throw new OncepayError(
      MERCHANT_CODES.ACCOUNT_MALFORMED,
      `${key.toBase58()} is owned by ${info.owner.toBase58()}, not the oncepay program ${c.programId.toBase58()}`,
    );
  }
  return decodeMerchantAccount(key.toBase58(), info.data);
}

export interface MerchantInit {
  merchant: Address;
  /** True when this call created the config; false when it already existed. */
  created: boolean;
  /** Whether the existing (or new) config has the payout authority that was asked for. */
  matches: boolean;
  account: MerchantAccount;
  signature: string | null;
}

/** initialize_merchant, unless the config already exists (then it is reported, with whether it matches). */
export async function initMerchant(
  c: MerchantChain,
  o: { authority: Keypair; payoutAuthority: PublicKey; payer?: Keypair },
): Promise<MerchantInit> {
  const { merchant } = merchantAddress(c.programId, o.authority.publicKey);
  const found = (account: MerchantAccount, created: boolean, signature: string | null): MerchantInit => ({
    merchant: account.address,
    created,
    matches:
      account.payoutAuthority === o.payoutAuthority.toBase58() &&
      account.merchantAuthority === o.authority.publicKey.toBase58(),
    account,
    signature,
  });
  const existing = await readMerchantAccount(c, merchant);
  if (existing) return found(existing, false, null);
  const payer = o.payer ?? o.authority;
  const { ix } = initializeMerchantInstruction(c.programId, o.authority.publicKey, o.payoutAuthority, payer.publicKey);
  const signers = payer.publicKey.equals(o.authority.publicKey) ? [o.authority] : [payer, o.authority];
  try {
    const landed = await sendAndConfirm(c.connection, [ix], signers, c.send);
    return found(await mustRead(c, merchant), true, landed.signature);
  } catch (e) {
    // Another process created it between our read and our transaction: report it like any existing config.
    if (e instanceof TransactionFailed && e.programError === 'MerchantAlreadyInitialized')
      return found(await mustRead(c, merchant), false, null);
    throw e;
  }
}

async function mustRead(c: MerchantChain, merchant: PublicKey): Promise<MerchantAccount> {
  const a = await readMerchantAccount(c, merchant);
  if (!a)
    throw new OncepayError(
      MERCHANT_CODES.NOT_INITIALIZED,
      `no merchant config at ${merchant.toBase58()}: run \`oncepay merchant init\``,
      { merchant: merchant.toBase58() },
    );
  return a;
}

export interface MerchantChange {
  account: MerchantAccount;
  /** False when the config already said so (no transaction was sent). */
  changed: boolean;
  signature: string | null;
}

async function change(
  c: MerchantChain,
  authority: Keypair,
  already: (a: MerchantAccount) => boolean,
  ix: () => ReturnType<typeof setPausedInstruction>,
): Promise<MerchantChange> {
  const { merchant } = merchantAddress(c.programId, authority.publicKey);
  const before = await mustRead(c, merchant);
  if (before.merchantAuthority !== authority.publicKey.toBase58()) {
    throw new OncepayError(
      MERCHANT_CODES.AUTHORITY_MISMATCH,
      `${authority.publicKey.toBase58()} is not the merchant authority of ${merchant.toBase58()}`,
    );
  }
  if (already(before)) return { account: before, changed: false, signature: null };
  const landed = await sendAndConfirm(c.connection, [ix()], [authority], c.send);
  return { account: await mustRead(c, merchant), changed: true, signature: landed.signature };
}

/** set_paused: a paused merchant's payouts fail with MerchantPaused until unpaused. */
export function setMerchantPaused(c: MerchantChain, authority: Keypair, paused: boolean): Promise<MerchantChange> {
  return change(
    c,
    authority,
    (a) => a.paused === paused,
    () => setPausedInstruction(c.programId, authority.publicKey, paused),
  );
}

/** set_payout_authority: from the next attempt on, only `next` can sign this merchant's payouts. */
export function setMerchantPayoutAuthority(
  c: MerchantChain,
  authority: Keypair,
  next: PublicKey,
): Promise<MerchantChange> {
  return change(
    c,
    authority,
    (a) => a.payoutAuthority === address(next),
    () => setPayoutAuthorityInstruction(c.programId, authority.publicKey, next),
  );
}
