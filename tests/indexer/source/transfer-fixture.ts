// Real token transfers on a localnet for the subscription-source suites (stream, ws, any-order): a mint, a funded
// payer's token account, a merchant wallet's associated token account and an open invoice to that wallet.
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import type { LocalnetHandle } from '../../../localnet';
import { createLedger } from '../../../indexer/ledger';
import type { TestDb } from '../../../testkit/test-db';
import { airdrop, mintWithSource, send } from '../../../testkit/cluster';
import { scaledWait } from '../../../testkit/node';
import { until as untilTruthy } from '../../../testkit/until';

/** testkit's until, every 25 ms, for `ms` (longer on a real validator: testkit/node scaledWait). */
export function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  return untilTruthy(what, fn, { timeoutMs: scaledWait(ms), intervalMs: 25 });
}

export interface Merchant {
  connection: Connection;
  payer: Keypair;
  mint: PublicKey;
  source: PublicKey;
  ata: PublicKey;
  startSlot: number;
  ledger: ReturnType<typeof createLedger>;
}

/** A mint, a funded payer's token account, a merchant wallet's ATA, and an invoice for `expected` to that wallet. */
export async function merchantWithInvoice(
  net: Pick<LocalnetHandle, 'url'>,
  db: Pick<TestDb, 'pool'>,
  id: string,
  expected: bigint,
): Promise<Merchant> {
  const connection = new Connection(net.url, 'confirmed');
  const payer = Keypair.generate();
  const merchant = Keypair.generate();
  await airdrop(connection, payer.publicKey, 10_000_000_000);
  const { mint, source } = await mintWithSource(connection, payer, 6, 1_000_000_000n);
  // The invoice names the merchant's wallet; the transfers go to its associated token account.
  const ata = getAssociatedTokenAddressSync(mint, merchant.publicKey);
  await send(
    connection,
    [createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, merchant.publicKey, mint)],
    [payer],
  );
  const startSlot = await connection.getSlot('finalized');
  const ledger = createLedger({ db: db.pool });
  await ledger.createInvoice({
    id,
    mint: mint.toBase58(),
    expectedAmount: expected,
    depositAddress: merchant.publicKey.toBase58(),
  });
  return { connection, payer, mint, source, ata, startSlot, ledger };
}

/** Token transfers sent at once (skipPreflight), so several can land in one block. */
export async function transfers(
  m: Pick<Merchant, 'connection' | 'payer' | 'mint' | 'source' | 'ata'>,
  amounts: bigint[],
): Promise<string[]> {
  const { blockhash } = await m.connection.getLatestBlockhash();
  const sigs: string[] = [];
  for (const a of amounts) {
    const tx = new Transaction({ feePayer: m.payer.publicKey, recentBlockhash: blockhash }).add(
      createTransferCheckedInstruction(m.source, m.mint, m.ata, m.payer.publicKey, a, 6),
    );
    tx.sign(m.payer);
    sigs.push(await m.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true }));
  }
  return sigs;
}

/** The invoice's credited amount. */
export async function credited(db: Pick<TestDb, 'pool'>, id: string): Promise<bigint> {
  const { rows } = await db.pool.query(`SELECT credited_amount::text AS c FROM invoices WHERE id = $1`, [id]);
  return BigInt(rows[0].c);
}

export const sum = (xs: bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);

/** The websocket source's timings for tests: everything within a fraction of a second, provisional rows kept. */
export const QUICK_WS = {
  commitment: 'confirmed',
  pingMs: 200,
  idleTimeoutMs: 5_000,
  refreshMs: 200,
  checkpointMs: 100,
} as const;
