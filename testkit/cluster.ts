// Small web3.js v1 helpers for the demo's on-chain scenes (also used by the localnet tests' setup), over JSON-RPC
// only (the localnet is reached like any node). Confirmation polls getSignatureStatuses, so no websocket is needed.
import { Connection, Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createInitializeAccount3Instruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import { OncepayError } from '../common/errors';
import { DEMO_CODES } from '../common/errors/codes';
import { sleep } from '../common/sleep';

export async function confirm(connection: Connection, signature: string, timeoutMs = 90_000): Promise<number> {
  const start = performance.now();
  for (;;) {
    const s = (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
    if (s && (s.confirmationStatus === 'confirmed' || s.confirmationStatus === 'finalized')) {
      if (s.err)
        throw new OncepayError(
          DEMO_CODES.TRANSACTION_FAILED,
          `transaction ${signature} failed: ${JSON.stringify(s.err)}`,
          { signature },
        );
      return s.slot;
    }
    if (performance.now() - start > timeoutMs)
      throw new OncepayError(DEMO_CODES.TIMEOUT, `transaction ${signature} not confirmed in ${timeoutMs} ms`, {
        signature,
      });
    await sleep(25);
  }
}

export async function send(
  connection: Connection,
  ixs: TransactionInstruction[],
  signers: Keypair[],
  confirmTimeoutMs?: number,
): Promise<{ signature: string; slot: number }> {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: signers[0].publicKey, blockhash, lastValidBlockHeight }).add(...ixs);
  tx.sign(...signers);
  const signature = await connection.sendRawTransaction(tx.serialize(), { skipPreflight: false });
  const slot = await confirm(connection, signature, confirmTimeoutMs);
  return { signature, slot };
}

export async function airdrop(connection: Connection, to: PublicKey, lamports = 5_000_000_000): Promise<void> {
  await confirm(connection, await connection.requestAirdrop(to, lamports));
}

/** A new SPL Token mint: create the account (rent-exempt, `rent` lamports) and InitializeMint2, `payer` minting. */
export function mintAccountInstructions(
  payer: PublicKey,
  mint: PublicKey,
  decimals: number,
  rent: number,
): TransactionInstruction[] {
  return [
    SystemProgram.createAccount({
      fromPubkey: payer,
      newAccountPubkey: mint,
      lamports: rent,
      space: MINT_SIZE,
      programId: TOKEN_PROGRAM_ID,
    }),
    createInitializeMint2Instruction(mint, decimals, payer, null),
  ];
}

export async function createMint(connection: Connection, payer: Keypair, decimals: number): Promise<PublicKey> {
  const mint = Keypair.generate();
  const rent = await connection.getMinimumBalanceForRentExemption(MINT_SIZE);
  await send(connection, mintAccountInstructions(payer.publicKey, mint.publicKey, decimals, rent), [payer, mint]);
  return mint.publicKey;
}

export async function createTokenAccount(
  connection: Connection,
  payer: Keypair,
  mint: PublicKey,
  owner: PublicKey,
): Promise<PublicKey> {
  const acct = Keypair.generate();
  const rent = await connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE);
  await send(
    connection,
    [
      SystemProgram.createAccount({
        fromPubkey: payer.publicKey,
        newAccountPubkey: acct.publicKey,
        lamports: rent,
        space: ACCOUNT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeAccount3Instruction(acct.publicKey, mint, owner),
    ],
    [payer, acct],
  );
  return acct.publicKey;
}

export async function mintTo(
  connection: Connection,
  authority: Keypair,
  mint: PublicKey,
  to: PublicKey,
  amount: bigint,
): Promise<void> {
  await send(connection, [createMintToInstruction(mint, to, authority.publicKey, amount)], [authority]);
}

/** A new mint (payer its authority) and a token account of the payer's holding `amount` of it. */
export async function mintWithSource(
  connection: Connection,
  payer: Keypair,
  decimals: number,
  amount: bigint,
): Promise<{ mint: PublicKey; source: PublicKey }> {
  const mint = await createMint(connection, payer, decimals);
  const source = await createTokenAccount(connection, payer, mint, payer.publicKey);
  await mintTo(connection, payer, mint, source, amount);
  return { mint, source };
}

/** A Solana Pay style transfer: transferChecked with the invoice's reference key appended as a read-only key. */
export function payInstruction(p: {
  from: PublicKey;
  mint: PublicKey;
  to: PublicKey;
  owner: PublicKey;
  amount: bigint;
  decimals: number;
  reference: PublicKey;
}): TransactionInstruction {
  const ix = createTransferCheckedInstruction(p.from, p.mint, p.to, p.owner, p.amount, p.decimals);
  ix.keys.push({ pubkey: p.reference, isSigner: false, isWritable: false });
  return ix;
}

export async function tokenBalance(connection: Connection, account: PublicKey | string): Promise<bigint> {
  const r = await connection.getTokenAccountBalance(new PublicKey(account), 'confirmed');
  return BigInt(r.value.amount);
}

/** Wait until the node's finalized slot reaches `slot` (the indexer reads finalized blocks only). */
export async function waitFinalized(connection: Connection, slot: number, timeoutMs = 90_000): Promise<number> {
  const start = performance.now();
  for (;;) {
    const f = await connection.getSlot('finalized');
    if (f >= slot) return f;
    if (performance.now() - start > timeoutMs)
      throw new OncepayError(DEMO_CODES.TIMEOUT, `finalized slot did not reach ${slot} in ${timeoutMs} ms`);
    await sleep(25);
  }
}
