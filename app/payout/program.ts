// The oncepay program's interface as the SDK needs it: the initialize_merchant, set_paused, set_payout_authority and
// execute_payout instructions, the
// op account layout and the named errors. Anchor conventions (8-byte discriminators) so it matches idl/oncepay.json (checked by a test).
// The named errors are read from the IDL's error table (the one anchor-lang writes from the program's
// #[error_code] enum), never written here by hand.
import { createHash } from 'crypto';
import { PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import idl from '../../idl/oncepay.json';
import { OncepayError } from '../../common/errors';
import { U64_MAX } from '../../common/amount';
import { AMOUNT_CODES, IDL_CODES, PAYOUT_CODES } from '../../common/errors/codes';
import { OpId, opId, opIdBytes } from '../op-id';
import { Address, address } from '../types';

export const ONCEPAY_PROGRAM_ID = '5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj';

/** The program's error table, as the IDL states it: number → name (Anchor offset 6000). */
const PROGRAM_ERROR_NAMES: ReadonlyMap<number, string> = new Map(
  (idl.errors as ReadonlyArray<{ code: number; name: string }>).map((e) => [e.code, e.name]),
);

/** The number of the program error `name` in the IDL; throws (at load) if the IDL has no such error. */
function programErrorNumber(name: string): number {
  for (const [code, n] of PROGRAM_ERROR_NAMES) if (n === name) return code;
  throw new OncepayError(IDL_CODES.ERROR_UNKNOWN, `idl/oncepay.json names no program error ${name}`);
}

/** The program errors the SDK branches on, numbered as the IDL numbers them. */
export const PROGRAM_ERRORS = {
  /** This op id was paid before: another attempt won (journal rule 2). */
  OperationAlreadyConsumed: programErrorNumber('OperationAlreadyConsumed'),
  /** The signer is not the merchant's payout authority: the payout is not at fault, its signer is. */
  Unauthorized: programErrorNumber('Unauthorized'),
} as const;

function discriminator(preimage: string): Buffer {
  return createHash('sha256').update(preimage).digest().subarray(0, 8);
}
export const EXECUTE_PAYOUT_DISCRIMINATOR = discriminator('global:execute_payout');
export const INITIALIZE_MERCHANT_DISCRIMINATOR = discriminator('global:initialize_merchant');
export const SET_PAUSED_DISCRIMINATOR = discriminator('global:set_paused');
export const SET_PAYOUT_AUTHORITY_DISCRIMINATOR = discriminator('global:set_payout_authority');

/**
 * initialize_merchant(payout_authority, merchant_bump), signed and paid by the merchant authority: accounts as in
 * idl/oncepay.json. Returns the merchant config PDA (seeds "merchant" ‖ authority) with the instruction.
 */
export function initializeMerchantInstruction(
  programId: PublicKey,
  authority: PublicKey,
  payoutAuthority: PublicKey,
): { ix: TransactionInstruction; merchant: PublicKey } {
  const { merchant, bump } = merchantAddress(programId, authority);
  const ix = new TransactionInstruction({
    programId,
    keys: [
      { pubkey: authority, isSigner: true, isWritable: false },
      { pubkey: authority, isSigner: true, isWritable: true },
      { pubkey: merchant, isSigner: false, isWritable: true },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
    ],
    data: Buffer.concat([INITIALIZE_MERCHANT_DISCRIMINATOR, payoutAuthority.toBuffer(), Buffer.from([bump])]),
  });
  return { ix, merchant };
}

/** The merchant config PDA ["merchant", merchant_authority] and its canonical bump. */
export function merchantAddress(programId: PublicKey, authority: PublicKey): { merchant: PublicKey; bump: number } {
  const [merchant, bump] = PublicKey.findProgramAddressSync([Buffer.from('merchant'), authority.toBuffer()], programId);
  return { merchant, bump };
}

/** The two accounts of set_paused / set_payout_authority: the merchant authority (signer) and its config PDA. */
function merchantAuthorityInstruction(
  programId: PublicKey,
  authority: PublicKey,
  data: Buffer,
): TransactionInstruction {
  return new TransactionInstruction({
    programId,
    keys: [
      { pubkey: authority, isSigner: true, isWritable: false },
      { pubkey: merchantAddress(programId, authority).merchant, isSigner: false, isWritable: true },
    ],
    data,
  });
}

/** set_paused(paused: bool), signed by the merchant authority. */
export function setPausedInstruction(
  programId: PublicKey,
  authority: PublicKey,
  paused: boolean,
): TransactionInstruction {
  return merchantAuthorityInstruction(
    programId,
    authority,
    Buffer.concat([SET_PAUSED_DISCRIMINATOR, Buffer.from([paused ? 1 : 0])]),
  );
}

/** set_payout_authority(new_payout_authority: Pubkey), signed by the merchant authority. */
export function setPayoutAuthorityInstruction(
  programId: PublicKey,
  authority: PublicKey,
  newPayoutAuthority: PublicKey,
): TransactionInstruction {
  return merchantAuthorityInstruction(
    programId,
    authority,
    Buffer.concat([SET_PAYOUT_AUTHORITY_DISCRIMINATOR, newPayoutAuthority.toBuffer()]),
  );
}

export interface ExecutePayoutAccounts {
  payoutAuthority: PublicKey;
  payer: PublicKey;
  merchant: PublicKey;
  operation: PublicKey;
  vault: PublicKey;
  mint: PublicKey;
  recipientToken: PublicKey;
  tokenProgram: PublicKey;
}

/** data = discriminator[8] ‖ op_id[32] ‖ amount u64 LE ‖ op_bump u8 (Borsh, as Anchor encodes the args). */
export function encodeExecutePayoutData(args: { opId: OpId; amount: bigint; opBump: number }): Buffer {
  if (args.amount < 0n || args.amount > U64_MAX) throw new OncepayError(AMOUNT_CODES.OUT_OF_RANGE);
  if (!Number.isInteger(args.opBump) || args.opBump < 0 || args.opBump > 255)
    throw new OncepayError(PAYOUT_CODES.BUMP_INVALID);
  const data = Buffer.alloc(8 + 32 + 8 + 1);
  EXECUTE_PAYOUT_DISCRIMINATOR.copy(data, 0);
  opIdBytes(args.opId).copy(data, 8);
  data.writeBigUInt64LE(args.amount, 40);
  data.writeUInt8(args.opBump, 48);
  return data;
}

export function executePayoutInstruction(
  programId: PublicKey,
  accounts: ExecutePayoutAccounts,
  args: { opId: OpId; amount: bigint; opBump: number },
): TransactionInstruction {
  return new TransactionInstruction({
    programId,
    keys: [
      { pubkey: accounts.payoutAuthority, isSigner: true, isWritable: false },
      { pubkey: accounts.payer, isSigner: true, isWritable: true },
      { pubkey: accounts.merchant, isSigner: false, isWritable: false },
      { pubkey: accounts.operation, isSigner: false, isWritable: true },
      { pubkey: accounts.vault, isSigner: false, isWritable: true },
      { pubkey: accounts.mint, isSigner: false, isWritable: false },
      { pubkey: accounts.recipientToken, isSigner: false, isWritable: true },
      { pubkey: accounts.tokenProgram, isSigner: false, isWritable: false },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
    ],
    data: encodeExecutePayoutData(args),
  });
}

/** What the op account records: the proof that the operation executed, and with which terms. */
export interface OpAccount {
  opId: OpId;
  merchant: Address;
  recipient: Address;
  mint: Address;
  amount: bigint;
  slot: bigint;
  bump: number;
}

// Layout: discriminator[8] ‖ op_id[32] ‖ merchant[32] ‖ recipient[32] ‖ mint[32] ‖ amount u64 ‖ slot u64 ‖ bump u8.
export const OP_ACCOUNT_LEN = 8 + 32 * 4 + 8 + 8 + 1;
export const OP_ACCOUNT_NAME = 'Operation';
export const OP_ACCOUNT_DISCRIMINATOR = discriminator(`account:${OP_ACCOUNT_NAME}`);

export function decodeOpAccount(data: Uint8Array, opts: { discriminator?: Buffer } = {}): OpAccount {
  const b = Buffer.from(data);
  const disc = opts.discriminator ?? OP_ACCOUNT_DISCRIMINATOR;
  if (b.length < OP_ACCOUNT_LEN) {
    throw new OncepayError(
      PAYOUT_CODES.OP_ACCOUNT_MALFORMED,
      `op account is ${b.length} bytes, expected ≥ ${OP_ACCOUNT_LEN}`,
    );
  }
  if (!b.subarray(0, 8).equals(disc)) {
    throw new OncepayError(
      PAYOUT_CODES.OP_ACCOUNT_MALFORMED,
      `op account discriminator ${b.subarray(0, 8).toString('hex')} ≠ ${disc.toString('hex')}`,
    );
  }
  const key = (o: number) => address(new PublicKey(b.subarray(o, o + 32)));
  return {
    opId: opId(b.subarray(8, 40)),
    merchant: key(40),
    recipient: key(72),
    mint: key(104),
    amount: b.readBigUInt64LE(136),
    slot: b.readBigUInt64LE(144),
    bump: b.readUInt8(152),
  };
}

/** The oncepay program's error name for a transaction error (e.g. "MerchantPaused"), if it is one of the IDL's. */
export function programErrorName(err: unknown): string | undefined {
  const n = customErrorCode(err);
  return n === undefined ? undefined : PROGRAM_ERROR_NAMES.get(n);
}

/**
 * A transaction error as stored and shown: the program's error name and number (e.g. "MerchantPaused (6002)")
 * when the IDL names it, else the error's JSON (a runtime error such as InsufficientFundsForFee, or a custom
 * number the IDL does not know).
 */
export function describeTransactionError(err: unknown): string {
  const n = customErrorCode(err);
  const name = n === undefined ? undefined : PROGRAM_ERROR_NAMES.get(n);
  return name === undefined ? JSON.stringify(err) : `${name} (${n})`;
}

/** The custom program error number of a transaction error ({ InstructionError: [i, { Custom: n }] }), if any. */
export function customErrorCode(err: unknown): number | undefined {
  if (err && typeof err === 'object' && 'InstructionError' in err) {
    const ie = (err as { InstructionError: unknown }).InstructionError;
    if (Array.isArray(ie) && ie[1] && typeof ie[1] === 'object' && 'Custom' in ie[1]) {
      const n = (ie[1] as { Custom: unknown }).Custom;
      if (typeof n === 'number') return n;
    }
  }
  return undefined;
}
