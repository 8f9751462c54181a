// Shared setup for the localnet tests: a web3.js Connection on a fresh localnet, funded keypairs, a mint.
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  sendAndConfirmTransaction,
} from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToCheckedInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import type { LocalnetHandle } from '../../localnet';

export function connect(net: LocalnetHandle): Connection {
  return new Connection(net.url, { commitment: 'confirmed', wsEndpoint: net.wsUrl, disableRetryOnRateLimit: true });
}

/** A JSON-RPC response as the wire carries it: the caller narrows `result` / `error.data` to what it expects. */
export interface RpcResponse<R = unknown, D = unknown> {
  result?: R;
  error?: { code: number; message: string; data?: D };
}

/** A raw JSON-RPC call (no web3.js), returning the whole response object. */
export async function rpc<R = unknown, D = unknown>(
  url: string,
  method: string,
  params: unknown[] = [],
): Promise<RpcResponse<R, D>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as RpcResponse<R, D>;
}

export async function funded(conn: Connection, sol = 10): Promise<Keypair> {
  const kp = Keypair.generate();
  const sig = await conn.requestAirdrop(kp.publicKey, sol * LAMPORTS_PER_SOL);
  const bh = await conn.getLatestBlockhash();
  await conn.confirmTransaction({ signature: sig, ...bh }, 'confirmed');
  return kp;
}

export async function send(
  conn: Connection,
  payer: Keypair,
  ixs: TransactionInstruction[],
  signers: Keypair[] = [],
): Promise<string> {
  return sendAndConfirmTransaction(conn, new Transaction().add(...ixs), [payer, ...signers], {
    commitment: 'confirmed',
  });
}

export interface TokenSetup {
  mint: PublicKey;
  decimals: number;
  owner: Keypair;
  ata: PublicKey;
}

/** A 6-decimal mint whose authority is `payer`, and `payer`'s ATA holding `amount`. */
export async function mintWithBalance(conn: Connection, payer: Keypair, amount: bigint): Promise<TokenSetup> {
  const mint = Keypair.generate();
  const decimals = 6;
  const rent = await conn.getMinimumBalanceForRentExemption(MINT_SIZE);
  const ata = getAssociatedTokenAddressSync(mint.publicKey, payer.publicKey);
  await send(
    conn,
    payer,
    [
      SystemProgram.createAccount({
        fromPubkey: payer.publicKey,
        newAccountPubkey: mint.publicKey,
        lamports: rent,
        space: MINT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeMint2Instruction(mint.publicKey, decimals, payer.publicKey, null),
      createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, payer.publicKey, mint.publicKey),
      createMintToCheckedInstruction(mint.publicKey, ata, payer.publicKey, amount, decimals),
    ],
    [mint],
  );
  return { mint: mint.publicKey, decimals, owner: payer, ata };
}

export async function until<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  tries = 400,
  ms = 25,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, ms));
  }
  throw new Error(`timed out waiting for ${what}`);
}
