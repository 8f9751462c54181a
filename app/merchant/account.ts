// The merchant config account (PDA ["merchant", merchant_authority]) as the program writes it. Pure.
// Layout (Borsh, as in idl/oncepay.json): discriminator[8] ‖ merchant_authority[32] ‖ payout_authority[32] ‖
// paused u8 ‖ bump u8.
import { createHash } from 'crypto';
import { PublicKey } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import { Address, address } from '../types';
import { MERCHANT_CODES } from '../../common/errors/codes';

export const MERCHANT_ACCOUNT_LEN = 8 + 32 + 32 + 1 + 1;
export const MERCHANT_ACCOUNT_DISCRIMINATOR = createHash('sha256').update('account:Merchant').digest().subarray(0, 8);

/** A merchant's on-chain configuration. */
export interface MerchantAccount {
  /** The merchant config PDA. */
  address: Address;
  /** Who may pause, unpause and rotate the payout authority (the PDA's seed). */
  merchantAuthority: Address;
  /** Who signs payouts. */
  payoutAuthority: Address;
  paused: boolean;
  bump: number;
}

export function decodeMerchantAccount(addr: Address | string, data: Uint8Array): MerchantAccount {
  const b = Buffer.from(data);
  if (b.length < MERCHANT_ACCOUNT_LEN || !b.subarray(0, 8).equals(MERCHANT_ACCOUNT_DISCRIMINATOR)) {
    throw new OncepayError(
      MERCHANT_CODES.ACCOUNT_MALFORMED,
      `${addr} is not an oncepay merchant config (${b.length} bytes)`,
      { address: addr },
    );
  }
  if (b[72] > 1)
    throw new OncepayError(MERCHANT_CODES.ACCOUNT_MALFORMED, `${addr}: paused flag is ${b[72]}, not a bool`, {
      address: addr,
    });
  return {
    address: address(addr, 'merchant'),
    merchantAuthority: address(new PublicKey(b.subarray(8, 40))),
    payoutAuthority: address(new PublicKey(b.subarray(40, 72))),
    paused: b[72] === 1,
    bump: b[73],
  };
}
