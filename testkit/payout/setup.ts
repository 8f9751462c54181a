// On-chain setup for payout tests over a JSON-RPC Connection (the localnet): a mint, a merchant config PDA
// (initialize_merchant), a vault owned by the merchant PDA, funded, and recipient token accounts. Sending and
// confirming over JSON-RPC are testkit/cluster.ts's helpers.
import { Connection, Keypair, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createInitializeAccount3Instruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
} from '@solana/spl-token';
import { initializeMerchantInstruction } from '../../app/merchant/instructions';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { confirm, send } from '../cluster';

export { tokenBalance } from '../cluster';

const CONFIRM_TIMEOUT_MS = 30_000;

export interface MerchantSetup {
  programId: PublicKey;
  /** Merchant authority and payout authority (one key in tests) and fee payer. */
  authority: Keypair;
  merchant: PublicKey;
  mint: PublicKey;
  vault: PublicKey;
}

/** How the setup reaches a chain: JSON-RPC (localnet) or a BanksClient (bankrun). */
export interface SetupIo {
  send(ixs: TransactionInstruction[], signers: Keypair[]): Promise<void>;
  rent(space: number): Promise<number>;
  fund(to: PublicKey): Promise<void>;
}

export function connectionIo(connection: Connection): SetupIo {
  return {
    send: async (ixs, signers) => void (await send(connection, ixs, signers, CONFIRM_TIMEOUT_MS)),
    rent: (space) => connection.getMinimumBalanceForRentExemption(space),
    fund: async (to) =>
      void (await confirm(connection, await connection.requestAirdrop(to, 10_000_000_000), CONFIRM_TIMEOUT_MS)),
  };
}

export async function createTokenAccount(
  io: SetupIo,
  payer: Keypair,
  mint: PublicKey,
  owner: PublicKey,
): Promise<PublicKey> {
  const acct = Keypair.generate();
  const rent = await io.rent(ACCOUNT_SIZE);
  await io.send(
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

/** `authority`: a given (e.g. seeded) key instead of a new one, so the merchant's and ops' addresses repeat. */
export async function setupMerchant(
  io: SetupIo,
  opts: { vaultFunds?: bigint; authority?: Keypair } = {},
): Promise<MerchantSetup> {
  const programId = new PublicKey(ONCEPAY_PROGRAM_ID);
  const authority = opts.authority ?? Keypair.generate();
  await io.fund(authority.publicKey);
  const { ix, merchant } = initializeMerchantInstruction(programId, authority.publicKey, authority.publicKey);
  await io.send([ix], [authority]);
  const mintKp = Keypair.generate();
  const mintRent = await io.rent(MINT_SIZE);
  await io.send(
    [
      SystemProgram.createAccount({
        fromPubkey: authority.publicKey,
        newAccountPubkey: mintKp.publicKey,
        lamports: mintRent,
        space: MINT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeMint2Instruction(mintKp.publicKey, 6, authority.publicKey, null),
    ],
    [authority, mintKp],
  );
  const vault = await createTokenAccount(io, authority, mintKp.publicKey, merchant);
  await io.send(
    [createMintToInstruction(mintKp.publicKey, vault, authority.publicKey, opts.vaultFunds ?? 1_000_000_000n)],
    [authority],
  );
  return { programId, authority, merchant, mint: mintKp.publicKey, vault };
}

/** Successful transactions that touched the op account: exactly one per executed operation. */
export async function successfulOpTransactions(connection: Connection, opPda: string): Promise<string[]> {
  const sigs = await connection.getSignaturesForAddress(new PublicKey(opPda), { limit: 100 }, 'confirmed');
  return sigs.filter((s) => s.err === null).map((s) => s.signature);
}
