// Test world for the payout program: keys, a mint, a merchant (created through initialize_merchant), its vault and
// a recipient, on one runtime. Token accounts and mints are written directly in their packed layouts (the same
// bytes InitializeMint/InitializeAccount would produce), owned by the chosen token program.
import { createHash } from 'node:crypto';
import { AnchorProvider, BN, BorshCoder, EventParser, LangErrorCode, Program, type Wallet } from '@coral-xyz/anchor';
import {
  AccountLayout,
  ACCOUNT_SIZE,
  AccountState,
  createInitializeAccount3Instruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  MINT_SIZE,
  MintLayout,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import idlJson from '../../idl/oncepay.json';
import type { Oncepay } from '../../idl/oncepay';
import { keypair } from './keys';
import { PROGRAM_ID, type Runtime, type TxResult } from './runtimes';

export { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID };
export const U64_MAX = 2n ** 64n - 1n;
const SOL = 1_000_000_000n;
const TOKEN_ACCOUNT_LAMPORTS = 10_000_000n;

/** A program error's name: the IDL's, PascalCase (idl/oncepay.ts carries Anchor's camelCase form). */
export type ProgramErrorName = Capitalize<Oncepay['errors'][number]['name']>;

/**
 * The program errors by name, read from the committed IDL (idl/oncepay.json `errors`, which both programs answer:
 * programs/oncepay's `#[error_code]`, programs/oncepay-lite's error table, checked against it by a host test).
 * A name not in the IDL is a type error.
 */
export const ERROR_CODES: Readonly<Record<ProgramErrorName, number>> = Object.freeze(
  Object.fromEntries(idlJson.errors.map((e) => [e.name, e.code])) as Record<ProgramErrorName, number>,
);

/**
 * Anchor's framework error numbers, from @coral-xyz/anchor 0.32.1's own table: both binaries answer these where the
 * Anchor program's account types and constraints reject (e.g. `AccountNotSigner` 3010 for a missing signature).
 */
export const ANCHOR_ERRORS = LangErrorCode;

/** Anchor's client for the program, from the committed IDL (no RPC is ever called). */
export function createProgram(): Program<Oncepay> {
  const connection = new Connection('http://127.0.0.1:1');
  const wallet = { publicKey: PublicKey.default } as unknown as Wallet;
  return new Program<Oncepay>(idlJson as unknown as Oncepay, new AnchorProvider(connection, wallet, {}));
}

export const program = createProgram();
export const coder = program.coder as BorshCoder;
export const eventParser = new EventParser(PROGRAM_ID, coder);

export function opIdFor(label: string): Buffer {
  return createHash('sha256').update(`oncepay-test:${label}`).digest();
}

export function merchantPda(authority: PublicKey): [PublicKey, number] {
  return PublicKey.findProgramAddressSync([Buffer.from('merchant'), authority.toBuffer()], PROGRAM_ID);
}

export function opPda(merchant: PublicKey, opId: Uint8Array): [PublicKey, number] {
  return PublicKey.findProgramAddressSync([Buffer.from('op'), merchant.toBuffer(), Buffer.from(opId)], PROGRAM_ID);
}

/** A valid but non-canonical bump for the op PDA (the next valid one below the canonical bump). */
export function nonCanonicalOpPda(merchant: PublicKey, opId: Uint8Array): [PublicKey, number] {
  const [, canonical] = opPda(merchant, opId);
  for (let bump = canonical - 1; bump >= 0; bump--) {
    try {
      const key = PublicKey.createProgramAddressSync(
        [Buffer.from('op'), merchant.toBuffer(), Buffer.from(opId), Buffer.from([bump])],
        PROGRAM_ID,
      );
      return [key, bump];
    } catch {
      // on the curve: not a PDA, try the next bump down
    }
  }
  throw new Error('no non-canonical bump');
}

export function fundSystemAccount(rt: Runtime, key: PublicKey, lamports = 100n * SOL): void {
  rt.setAccount(key, { lamports, data: new Uint8Array(0), owner: SystemProgram.programId });
}

export function writeMint(rt: Runtime, key: PublicKey, tokenProgram: PublicKey, supply: bigint, decimals = 6): void {
  const data = Buffer.alloc(MINT_SIZE);
  MintLayout.encode(
    {
      mintAuthorityOption: 1,
      mintAuthority: keypair().publicKey,
      supply,
      decimals,
      isInitialized: true,
      freezeAuthorityOption: 0,
      freezeAuthority: PublicKey.default,
    },
    data,
  );
  rt.setAccount(key, { lamports: TOKEN_ACCOUNT_LAMPORTS, data, owner: tokenProgram });
}

export function writeTokenAccount(
  rt: Runtime,
  key: PublicKey,
  opts: { mint: PublicKey; owner: PublicKey; amount: bigint; tokenProgram: PublicKey; immutableOwner?: boolean },
): void {
  // Token-2022 only: base layout, AccountType::Account (2), then one TLV entry ImmutableOwner (type 7, length 0),
  // which is what every Token-2022 associated token account carries.
  const data = Buffer.alloc(opts.immutableOwner ? ACCOUNT_SIZE + 1 + 4 : ACCOUNT_SIZE);
  if (opts.immutableOwner) {
    data[ACCOUNT_SIZE] = 2;
    data.writeUInt16LE(7, ACCOUNT_SIZE + 1);
    data.writeUInt16LE(0, ACCOUNT_SIZE + 3);
  }
  AccountLayout.encode(
    {
      mint: opts.mint,
      owner: opts.owner,
      amount: opts.amount,
      delegateOption: 0,
      delegate: PublicKey.default,
      state: AccountState.Initialized,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  );
  rt.setAccount(key, { lamports: TOKEN_ACCOUNT_LAMPORTS, data, owner: opts.tokenProgram });
}

export async function tokenBalance(rt: Runtime, key: PublicKey): Promise<bigint> {
  const a = await rt.getAccount(key);
  if (!a) throw new Error(`token account ${key.toBase58()} not found`);
  return AccountLayout.decode(a.data.subarray(0, ACCOUNT_SIZE)).amount;
}

/** Signs `instructions` with `feePayer` first, then `signers`, on a fresh blockhash of the runtime. */
export async function buildTx(
  rt: Runtime,
  instructions: TransactionInstruction[],
  feePayer: Keypair,
  signers: Keypair[] = [],
): Promise<Transaction> {
  const tx = new Transaction({ feePayer: feePayer.publicKey, recentBlockhash: await rt.blockhash() });
  tx.add(...instructions);
  const unique = new Map<string, Keypair>();
  for (const k of [feePayer, ...signers]) unique.set(k.publicKey.toBase58(), k);
  tx.sign(...unique.values());
  return tx;
}

type Send = World['send'];

/** `send` for a world: `buildTx` on `rt`, fee paid by `feePayer` unless another payer is given. */
function sender(rt: Runtime, feePayer: Keypair): Send {
  return async (instructions, signers = [], payer = feePayer) =>
    rt.send(await buildTx(rt, instructions, payer, signers));
}

function must(r: TxResult, what: string): void {
  if (!r.ok) throw new Error(`${what} failed: ${r.error}\n${r.logs.join('\n')}`);
}

/** initialize_merchant for fresh merchant and payout authorities, rent paid by `feePayer`; throws on failure. */
async function initializeMerchant(send: Send, feePayer: Keypair): Promise<Omit<Merchant, 'vault'>> {
  const authority = keypair();
  const payoutAuthority = keypair();
  const [pda, bump] = merchantPda(authority.publicKey);
  const ix = await program.methods
    .initializeMerchant(payoutAuthority.publicKey, bump)
    .accountsStrict({
      merchantAuthority: authority.publicKey,
      payer: feePayer.publicKey,
      merchant: pda,
      systemProgram: SystemProgram.programId,
    })
    .instruction();
  must(await send([ix], [authority]), 'initialize_merchant');
  return { authority, payoutAuthority, pda, bump };
}

export interface Merchant {
  authority: Keypair;
  payoutAuthority: Keypair;
  pda: PublicKey;
  bump: number;
  vault: PublicKey;
}

export interface World {
  rt: Runtime;
  tokenProgram: PublicKey;
  feePayer: Keypair;
  mint: PublicKey;
  merchant: Merchant;
  recipient: PublicKey;
  recipientOwner: PublicKey;
  /** Creates another merchant on the same runtime and mint, through initialize_merchant. */
  addMerchant(vaultAmount: bigint): Promise<Merchant>;
  /** A token account of `mint` for a fresh wallet. */
  addTokenAccount(mint: PublicKey, amount?: bigint): Promise<PublicKey>;
  /** Funds a fresh system account. */
  fund(key: PublicKey, lamports?: bigint): Promise<void>;
  send(instructions: TransactionInstruction[], signers?: Keypair[], feePayer?: Keypair): Promise<TxResult>;
}

export async function createWorld(
  rt: Runtime,
  opts: { tokenProgram?: PublicKey; vaultAmount?: bigint; mintSupply?: bigint } = {},
): Promise<World> {
  const tokenProgram = opts.tokenProgram ?? TOKEN_PROGRAM_ID;
  const vaultAmount = opts.vaultAmount ?? 1_000_000_000n;
  const feePayer = keypair();
  fundSystemAccount(rt, feePayer.publicKey, 1_000n * SOL);
  const mint = keypair().publicKey;
  writeMint(rt, mint, tokenProgram, opts.mintSupply ?? U64_MAX);

  const send = sender(rt, feePayer);

  const addTokenAccount = async (m: PublicKey, amount = 0n): Promise<PublicKey> => {
    const key = keypair().publicKey;
    writeTokenAccount(rt, key, { mint: m, owner: keypair().publicKey, amount, tokenProgram });
    return key;
  };

  const addMerchant = async (amount: bigint): Promise<Merchant> => {
    const m = await initializeMerchant(send, feePayer);
    const vault = keypair().publicKey;
    writeTokenAccount(rt, vault, { mint, owner: m.pda, amount, tokenProgram });
    return { ...m, vault };
  };

  const merchant = await addMerchant(vaultAmount);
  const recipientOwner = keypair().publicKey;
  const recipient = keypair().publicKey;
  writeTokenAccount(rt, recipient, { mint, owner: recipientOwner, amount: 0n, tokenProgram });
  const fund = async (key: PublicKey, lamports = 100n * SOL) => fundSystemAccount(rt, key, lamports);
  return {
    rt,
    tokenProgram,
    feePayer,
    mint,
    merchant,
    recipient,
    recipientOwner,
    addMerchant,
    addTokenAccount,
    fund,
    send,
  };
}

/**
 * The same world built only with transactions (CreateAccount, InitializeMint2, InitializeAccount3, MintTo,
 * initialize_merchant) from the runtime's own funded payer: no account is written directly.
 */
export async function createWorldViaTransactions(
  rt: Runtime,
  opts: { tokenProgram?: PublicKey; vaultAmount?: bigint } = {},
): Promise<World> {
  const tokenProgram = opts.tokenProgram ?? TOKEN_PROGRAM_ID;
  const feePayer = rt.payer;
  const mintAuthority = keypair();
  const send = sender(rt, feePayer);
  const create = (key: PublicKey, space: number) =>
    SystemProgram.createAccount({
      fromPubkey: feePayer.publicKey,
      newAccountPubkey: key,
      lamports: Number(TOKEN_ACCOUNT_LAMPORTS),
      space,
      programId: tokenProgram,
    });

  const mintKp = keypair();
  const mint = mintKp.publicKey;
  must(
    await send(
      [create(mint, MINT_SIZE), createInitializeMint2Instruction(mint, 6, mintAuthority.publicKey, null, tokenProgram)],
      [mintKp],
    ),
    'create mint',
  );

  const addTokenAccount = async (m: PublicKey, amount = 0n, owner = keypair().publicKey): Promise<PublicKey> => {
    const kp = keypair();
    const ixs = [
      create(kp.publicKey, ACCOUNT_SIZE),
      createInitializeAccount3Instruction(kp.publicKey, m, owner, tokenProgram),
    ];
    if (amount > 0n)
      ixs.push(createMintToInstruction(m, kp.publicKey, mintAuthority.publicKey, amount, [], tokenProgram));
    must(await send(ixs, amount > 0n ? [kp, mintAuthority] : [kp]), 'create token account');
    return kp.publicKey;
  };

  const addMerchant = async (amount: bigint): Promise<Merchant> => {
    const m = await initializeMerchant(send, feePayer);
    const vault = await addTokenAccount(mint, amount, m.pda);
    return { ...m, vault };
  };

  const fund = async (key: PublicKey, lamports = 100n * SOL) =>
    must(
      await send([
        SystemProgram.transfer({ fromPubkey: feePayer.publicKey, toPubkey: key, lamports: Number(lamports) }),
      ]),
      'fund',
    );

  const merchant = await addMerchant(opts.vaultAmount ?? 1_000_000_000n);
  const recipientOwner = keypair().publicKey;
  const recipient = await addTokenAccount(mint, 0n, recipientOwner);
  return {
    rt,
    tokenProgram,
    feePayer,
    mint,
    merchant,
    recipient,
    recipientOwner,
    addMerchant,
    addTokenAccount,
    fund,
    send,
  };
}

export interface PayoutParams {
  opId: Uint8Array;
  amount: bigint;
  /** Defaults to the canonical bump of the op PDA. */
  opBump?: number;
  payoutAuthority?: PublicKey;
  payer?: PublicKey;
  merchant?: PublicKey;
  operation?: PublicKey;
  vault?: PublicKey;
  mint?: PublicKey;
  recipientToken?: PublicKey;
  tokenProgram?: PublicKey;
  systemProgram?: PublicKey;
}

/** The execute_payout instruction, built by Anchor's `Program` from the IDL. */
export async function payoutIx(w: World, p: PayoutParams): Promise<TransactionInstruction> {
  const merchant = p.merchant ?? w.merchant.pda;
  const [op, bump] = opPda(merchant, p.opId);
  return program.methods
    .executePayout([...p.opId], new BN(p.amount.toString()), p.opBump ?? bump)
    .accountsStrict({
      payoutAuthority: p.payoutAuthority ?? w.merchant.payoutAuthority.publicKey,
      payer: p.payer ?? w.feePayer.publicKey,
      merchant,
      operation: p.operation ?? op,
      vault: p.vault ?? w.merchant.vault,
      mint: p.mint ?? w.mint,
      recipientToken: p.recipientToken ?? w.recipient,
      tokenProgram: p.tokenProgram ?? w.tokenProgram,
      systemProgram: p.systemProgram ?? SystemProgram.programId,
    })
    .instruction();
}

/** Sends one execute_payout signed by the merchant's payout authority. */
export async function payout(w: World, p: PayoutParams): Promise<TxResult> {
  return w.send([await payoutIx(w, p)], [w.merchant.payoutAuthority]);
}

export interface DecodedOperation {
  opId: number[];
  merchant: PublicKey;
  recipient: PublicKey;
  mint: PublicKey;
  amount: BN;
  slot: BN;
  bump: number;
}

export async function fetchOperation(rt: Runtime, key: PublicKey): Promise<DecodedOperation | null> {
  const a = await rt.getAccount(key);
  if (!a) return null;
  return coder.accounts.decode('operation', a.data) as DecodedOperation;
}

export function payoutEvents(logs: string[]): Array<{ name: string; data: Record<string, unknown> }> {
  return [...eventParser.parseLogs(logs)].filter((e) => e.name === 'payoutExecuted');
}
