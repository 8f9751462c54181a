// On-chain setup for payout tests over a JSON-RPC Connection (the localnet): a mint, a merchant config PDA
// (initialize_merchant), a vault owned by the merchant PDA, funded, and recipient token accounts. Confirmation
// by polling getSignatureStatuses (no websocket needed).
import { Connection, Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createInitializeAccount3Instruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
} from '@solana/spl-token';
import { initializeMerchantInstruction, ONCEPAY_PROGRAM_ID } from '../../../app/payout/program';

export interface MerchantSetup {
  programId: PublicKey;
  /** Merchant authority and payout authority (one key in tests) and fee payer. */
  authority: Keypair;
  merchant: PublicKey;
  mint: PublicKey;
  vault: PublicKey;
}

export async function confirm(connection: Connection, signature: string, timeoutMs = 30_000): Promise<void> {
  const start = performance.now();
  for (;;) {
    const s = (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
    if (s && (s.confirmationStatus === 'confirmed' || s.confirmationStatus === 'finalized')) {
      if (s.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(s.err)}`);
      return;
    }
    if (performance.now() - start > timeoutMs) throw new Error(`transaction ${signature} not confirmed in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function sendAndConfirm(connection: Connection, ixs: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: signers[0].publicKey, blockhash, lastValidBlockHeight }).add(...ixs);
  tx.sign(...signers);
  const sig = await connection.sendRawTransaction(tx.serialize(), { skipPreflight: false });
  await confirm(connection, sig);
  return sig;
}

export async function fund(connection: Connection, to: PublicKey, lamports = 10_000_000_000): Promise<void> {
  const sig = await connection.requestAirdrop(to, lamports);
  await confirm(connection, sig);
}

/** How the setup reaches a chain: JSON-RPC (localnet) or a BanksClient (bankrun). */
export interface SetupIo {
  send(ixs: TransactionInstruction[], signers: Keypair[]): Promise<void>;
  rent(space: number): Promise<number>;
  fund(to: PublicKey): Promise<void>;
}

export function connectionIo(connection: Connection): SetupIo {
  return {
    send: async (ixs, signers) => void (await sendAndConfirm(connection, ixs, signers)),
    rent: (space) => connection.getMinimumBalanceForRentExemption(space),
    fund: (to) => fund(connection, to),
  };
}

export async function createTokenAccount(io: SetupIo, payer: Keypair, mint: PublicKey, owner: PublicKey): Promise<PublicKey> {
  const acct = Keypair.generate();
  const rent = await io.rent(ACCOUNT_SIZE);
  await io.send(
    [
      SystemProgram.createAccount({ fromPubkey: payer.publicKey, newAccountPubkey: acct.publicKey, lamports: rent, space: ACCOUNT_SIZE, programId: TOKEN_PROGRAM_ID }),
      createInitializeAccount3Instruction(acct.publicKey, mint, owner),
    ],
    [payer, acct],
  );
  return acct.publicKey;
}

export async function setupMerchant(io: SetupIo, opts: { vaultFunds?: bigint } = {}): Promise<MerchantSetup> {
  const programId = new PublicKey(ONCEPAY_PROGRAM_ID);
  const authority = Keypair.generate();
  await io.fund(authority.publicKey);
  const { ix, merchant } = initializeMerchantInstruction(programId, authority.publicKey, authority.publicKey);
  await io.send([ix], [authority]);
  const mintKp = Keypair.generate();
  const mintRent = await io.rent(MINT_SIZE);
  await io.send(
    [
      SystemProgram.createAccount({ fromPubkey: authority.publicKey, newAccountPubkey: mintKp.publicKey, lamports: mintRent, space: MINT_SIZE, programId: TOKEN_PROGRAM_ID }),
      createInitializeMint2Instruction(mintKp.publicKey, 6, authority.publicKey, null),
    ],
    [authority, mintKp],
  );
  const vault = await createTokenAccount(io, authority, mintKp.publicKey, merchant);
  await io.send([createMintToInstruction(mintKp.publicKey, vault, authority.publicKey, opts.vaultFunds ?? 1_000_000_000n)], [authority]);
  return { programId, authority, merchant, mint: mintKp.publicKey, vault };
}

export async function tokenBalance(connection: Connection, account: PublicKey): Promise<bigint> {
  const r = await connection.getTokenAccountBalance(account, 'confirmed');
  return BigInt(r.value.amount);
}

/** Successful transactions that touched the op account: exactly one per executed operation. */
export async function successfulOpTransactions(connection: Connection, opPda: string): Promise<string[]> {
  const sigs = await connection.getSignaturesForAddress(new PublicKey(opPda), { limit: 100 }, 'confirmed');
  return sigs.filter((s) => s.err === null).map((s) => s.signature);
}
