// The registered merchants (api_merchants) as an operator names them: register one with an API key (generated unless
// given; stored hashed, returned once), and find one by its id or its merchant config address.
import * as crypto from 'crypto';
import { OncepayError } from '../../common/errors';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { Db } from '../../db/sql';
import { hashApiKey } from '../api/api-key-auth';
import { address } from '../types';
import { getMerchant, getMerchantByAddress, insertMerchant, MerchantRow } from './store';

export interface MerchantRegistration {
  name: string;
  program: string;
  merchant: string;
  vault: string;
  tokenProgram?: string;
  /** The wallet its invoices are paid to unless an invoice names one. */
  receivingAddress?: string;
  /** Use this API key instead of a generated one. */
  apiKey?: string;
}

/** Store the merchant with its API key's hash; the key itself is returned, and never stored. */
export async function registerMerchant(
  db: Db,
  r: MerchantRegistration,
): Promise<{ merchant: MerchantRow; apiKey: string }> {
  // An API key is a credential, not an operation key: random is right here.
  const apiKey = r.apiKey ?? `ok_${crypto.randomBytes(24).toString('base64url')}`;
  const merchant = await insertMerchant(db, {
    name: r.name,
    apiKeyHash: hashApiKey(apiKey),
    programId: address(r.program, 'program'),
    merchantAddress: address(r.merchant, 'merchant'),
    vault: address(r.vault, 'vault'),
    tokenProgram: r.tokenProgram ? address(r.tokenProgram, 'token program') : undefined,
    receivingAddress: r.receivingAddress ? address(r.receivingAddress, 'receiving address') : undefined,
  });
  return { merchant, apiKey };
}

/**
 * The registered merchant `ref` names (its api_merchants id: digits; else its merchant config address), or
 * MERCHANT_NOT_FOUND naming `flag`.
 */
export async function resolveMerchant(db: Db, ref: string, flag = '--merchant'): Promise<MerchantRow> {
  const m = /^[0-9]+$/.test(ref) ? await getMerchant(db, ref) : await getMerchantByAddress(db, ref);
  if (!m)
    throw new OncepayError(
      PAYOUT_CODES.MERCHANT_NOT_FOUND,
      `${flag} ${ref}: no such registered merchant; add it with \`oncepay payout merchant-add\``,
      { flag },
    );
  return m;
}
