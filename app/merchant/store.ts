// Reads and writes of the registered merchants (api_merchants): ./queries.ts's statements run through db/sql, rows
// mapped to MerchantRow. The payouts refer to a merchant by its row id (app/payout/store.ts).
import { Db, one, rows } from '../../db/sql';
import { Address } from '../types';
import * as q from './queries';

export interface MerchantRow {
  id: string;
  name: string;
  programId: Address;
  merchantAddress: Address;
  vault: Address;
  tokenProgram: Address;
  /** Where its invoices are paid unless a request names another wallet (migration 0300); null: not set. */
  receivingAddress: Address | null;
  createdAt: Date;
}

/** A row of api_merchants as SELECT * returns it. */
interface MerchantSqlRow {
  id: string;
  name: string;
  program_id: Address;
  merchant_address: Address;
  vault: Address;
  token_program: Address;
  receiving_address: Address | null;
  created_at: Date;
}

function toMerchant(r: MerchantSqlRow): MerchantRow {
  return {
    id: String(r.id),
    name: r.name,
    programId: r.program_id,
    merchantAddress: r.merchant_address,
    vault: r.vault,
    tokenProgram: r.token_program,
    receivingAddress: r.receiving_address ?? null,
    createdAt: r.created_at,
  };
}

const merchantOrNull = (r: MerchantSqlRow | null) => (r ? toMerchant(r) : null);

export async function insertMerchant(db: Db, m: Parameters<typeof q.insertMerchant>[0]): Promise<MerchantRow> {
  return toMerchant((await one<MerchantSqlRow>(db, q.insertMerchant(m)))!);
}

export async function getMerchantByApiKeyHash(db: Db, hash: string): Promise<MerchantRow | null> {
  return merchantOrNull(await one<MerchantSqlRow>(db, q.getMerchantByApiKeyHash(hash)));
}

export async function getMerchant(db: Db, id: string): Promise<MerchantRow | null> {
  return merchantOrNull(await one<MerchantSqlRow>(db, q.getMerchant(id)));
}

/** Every registered merchant, by id. */
export async function listMerchants(db: Db): Promise<MerchantRow[]> {
  return (await rows<MerchantSqlRow>(db, q.listMerchants())).map(toMerchant);
}

export async function getMerchantByAddress(db: Db, merchantAddress: string): Promise<MerchantRow | null> {
  return merchantOrNull(await one<MerchantSqlRow>(db, q.getMerchantByAddress(merchantAddress)));
}
