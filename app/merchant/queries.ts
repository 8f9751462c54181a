// Every SQL statement on the registered merchants (api_merchants), as Queries that db/sql runs (./store.ts).
import type { Query } from '../../db/sql';

export function insertMerchant(m: {
  name: string;
  apiKeyHash: string;
  programId: string;
  merchantAddress: string;
  vault: string;
  tokenProgram?: string;
  receivingAddress?: string;
}): Query {
  return {
    text: `INSERT INTO api_merchants (name, api_key_hash, program_id, merchant_address, vault, token_program, receiving_address)
           VALUES ($1, $2, $3, $4, $5, COALESCE($6, 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'), $7) RETURNING *`,
    values: [
      m.name,
      m.apiKeyHash,
      m.programId,
      m.merchantAddress,
      m.vault,
      m.tokenProgram ?? null,
      m.receivingAddress ?? null,
    ],
  };
}

export function getMerchantByApiKeyHash(hash: string): Query {
  return { text: 'SELECT * FROM api_merchants WHERE api_key_hash = $1', values: [hash] };
}

export function getMerchant(id: string): Query {
  return { text: 'SELECT * FROM api_merchants WHERE id = $1', values: [id] };
}

/** Every registered merchant (the payout workers match them against their keys: app/payout/signers.ts). */
export function listMerchants(): Query {
  return { text: 'SELECT * FROM api_merchants ORDER BY id', values: [] };
}

export function getMerchantByAddress(merchantAddress: string): Query {
  return {
    text: 'SELECT * FROM api_merchants WHERE merchant_address = $1 ORDER BY id LIMIT 1',
    values: [merchantAddress],
  };
}
