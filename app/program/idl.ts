// The oncepay program's interface as the IDL states it (idl/oncepay.json: anchor-lang's own IDL of programs/oncepay,
// which both binaries serve), read once at load: the program's address, Anchor's BorshCoder over the IDL (instruction
// data and account data, discriminators included) and the instructions' account lists (order, signer, writable,
// fixed addresses). Nothing here knows a byte offset: an instruction or account the program changes changes the IDL
// (`make program` rewrites it, tests/programs/idl.test.ts checks it), and this follows. Why a coder at run time and not
// a generator: README.md, dependencies.
import { PublicKey, TransactionInstruction } from '@solana/web3.js';
import BN from 'bn.js';
// The coder alone: the package's index also loads its Program/Provider/workspace machinery, which the SDK never uses.
import { BorshCoder } from '@coral-xyz/anchor/dist/cjs/coder/borsh';
import type { Idl } from '@coral-xyz/anchor/dist/cjs/idl';
import idlJson from '../../idl/oncepay.json';
import { IDL_CODES, OncepayError } from '../../common/errors';

// Nothing exported here is typed with Anchor's or bn.js's types: these declarations reach the SDK's .d.ts files, and a
// merchant's TypeScript project must compile them without @types/bn.js (tests/sdk/package.test.ts).
const ONCEPAY_IDL: Idl = idlJson as Idl;
const CODER = new BorshCoder(ONCEPAY_IDL);

/** The program's address, as the IDL declares it (`declare_id!` in programs/oncepay). */
export const ONCEPAY_PROGRAM_ID: string = ONCEPAY_IDL.address;

/** The program's error table, as the IDL states it (Anchor numbers from 6000). */
export const ONCEPAY_IDL_ERRORS: ReadonlyArray<{ code: number; name: string }> = ONCEPAY_IDL.errors ?? [];

/** A u64 argument as the coder takes it (bn.js); the SDK's amounts stay bigint everywhere else. */
export const u64Arg = (n: bigint): unknown => new BN(n.toString());
/** A u64 field as the coder decodes it (bn.js), as a bigint. */
export const u64Value = (n: { toString(): string }): bigint => BigInt(n.toString());

/** The IDL's instruction `name`: its discriminator and Borsh-encoded `args` (the IDL's argument names). */
export function encodeInstructionData(name: string, args: Record<string, unknown>): Buffer {
  return CODER.instruction.encode(name, args);
}

/** The account type `name`'s size (discriminator included) and discriminator, as the IDL lays it out. */
export const accountSize = (name: string): number => CODER.accounts.size(name);
export const accountDiscriminator = (name: string): Buffer => CODER.accounts.accountDiscriminator(name);

/** The fields of an account of type `name`; refused (the coder's error) unless its discriminator leads. */
export function decodeAccount<T>(name: string, data: Buffer): T {
  return CODER.accounts.decode<T>(name, data);
}

/** The fields of an account of type `name` after its first 8 bytes, whatever they are (the caller checked them). */
export function decodeAccountFields<T>(name: string, data: Buffer): T {
  return CODER.accounts.decodeUnchecked<T>(name, data);
}

/**
 * The instruction `name` of the IDL with its data encoded by the coder from `args` (the IDL's argument names) and its
 * account list in the IDL's order and flags, each key taken from `accounts` by the IDL's account name, or the IDL's
 * fixed address (the system program). An account the IDL lists and `accounts` lacks is refused.
 */
export function programInstruction(
  programId: PublicKey,
  name: string,
  accounts: Readonly<Record<string, PublicKey>>,
  args: Record<string, unknown>,
): TransactionInstruction {
  const ix = ONCEPAY_IDL.instructions.find((i) => i.name === name);
  if (!ix) throw new OncepayError(IDL_CODES.INSTRUCTION_UNKNOWN, `the IDL has no instruction ${name}`);
  const keys = ix.accounts.map((a) => {
    if ('accounts' in a) {
      throw new OncepayError(IDL_CODES.INSTRUCTION_UNKNOWN, `${name}: composite accounts are not supported`);
    }
    const pubkey = accounts[a.name] ?? (a.address === undefined ? undefined : new PublicKey(a.address));
    if (pubkey === undefined) {
      throw new OncepayError(IDL_CODES.ACCOUNT_MISSING, `${name}: no ${a.name} account given`, { account: a.name });
    }
    return { pubkey, isSigner: a.signer === true, isWritable: a.writable === true };
  });
  return new TransactionInstruction({ programId, keys, data: encodeInstructionData(name, args) });
}
