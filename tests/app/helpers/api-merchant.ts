// A merchant row the merchant API authenticates with `apiKey` (fresh random addresses: no chain is involved).
import { Keypair } from '@solana/web3.js';
import type { Pool } from 'pg';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { insertMerchant, MerchantRow } from '../../../app/merchant/store';
import { address } from '../../../app/types';

export function insertApiMerchant(pool: Pool, name: string, apiKey: string): Promise<MerchantRow> {
  const pk = () => address(Keypair.generate().publicKey);
  return insertMerchant(pool, {
    name,
    apiKeyHash: hashApiKey(apiKey),
    programId: address(ONCEPAY_PROGRAM_ID),
    merchantAddress: pk(),
    vault: pk(),
  });
}
