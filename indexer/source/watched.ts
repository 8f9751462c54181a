// The addresses a subscription source (gRPC stream, websocket) watches, read from the open invoices.
import { getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import type { Pool } from 'pg';

/**
 * The addresses the stream filters on: each open invoice's deposit address, its associated token accounts for the
 * invoice's mint under both token programs (a deposit address may be the owner wallet), and its reference key.
 * A transfer into another token account of an owner is not seen by the stream; the scanner still finds it.
 */
export async function watchedAddresses(db: Pick<Pool, 'query'>): Promise<string[]> {
  const { rows } = await db.query<{ mint: string; deposit_address: string | null; reference_key: string | null }>(
    `SELECT mint, deposit_address, reference_key FROM invoices WHERE status = 'open'`,
  );
  const out = new Set<string>();
  for (const r of rows) {
    if (r.reference_key) out.add(r.reference_key);
    if (!r.deposit_address) continue;
    out.add(r.deposit_address);
    if (r.mint === 'SOL') continue;
    try {
      const owner = new PublicKey(r.deposit_address);
      const mint = new PublicKey(r.mint);
      for (const program of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID])
        out.add(getAssociatedTokenAddressSync(mint, owner, true, program).toBase58());
    } catch {
      // not an address (the ledger validates invoices); nothing to derive
    }
  }
  return [...out];
}
