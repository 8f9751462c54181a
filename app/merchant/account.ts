// The merchant config account (PDA ["merchant", merchant_authority]) as the program writes it, decoded by Anchor's
// coder from the IDL's `Merchant` type (app/program/idl.ts). Pure.
import { PublicKey } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import { MERCHANT_CODES } from '../../common/errors/codes';
import { accountSize, decodeAccount } from '../program/idl';
import { Address, address } from '../types';

/** The account's size: discriminator and fields, as the IDL lays them out. */
export const MERCHANT_ACCOUNT_LEN = accountSize('Merchant');

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

/** The fields of the IDL's Merchant type, as the coder decodes them. */
interface MerchantFields {
  merchant_authority: PublicKey;
  payout_authority: PublicKey;
  paused: boolean;
  bump: number;
}

export function decodeMerchantAccount(addr: Address | string, data: Uint8Array): MerchantAccount {
  let m: MerchantFields;
  try {
    m = decodeAccount<MerchantFields>('Merchant', Buffer.from(data));
  } catch (e) {
    // A wrong discriminator, too few bytes, a paused flag that is not a bool: not a merchant config.
    throw new OncepayError(
      MERCHANT_CODES.ACCOUNT_MALFORMED,
      `${addr} is not an oncepay merchant config (${data.length} bytes: ${(e as Error).message})`,
      { address: addr },
    );
  }
  return {
    address: address(addr, 'merchant'),
    merchantAuthority: address(m.merchant_authority),
    payoutAuthority: address(m.payout_authority),
    paused: m.paused,
    bump: m.bump,
  };
}
