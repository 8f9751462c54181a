// The payout's side of the program interface: the execute_payout instruction and the op account, built and decoded
// from the IDL by Anchor's coder (app/program/idl.ts). The merchant's instructions are app/merchant/instructions.ts;
// the program's error table is app/program/errors.ts.
import { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import { U64_MAX } from '../../common/amount';
import { AMOUNT_CODES, PAYOUT_CODES } from '../../common/errors/codes';
import {
  accountDiscriminator,
  accountSize,
  decodeAccountFields,
  encodeInstructionData,
  programInstruction,
  u64Arg,
  u64Value,
} from '../program/idl';
import { OpId, opId, opIdBytes } from '../op-id';
import { Address, address } from '../types';

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

export interface ExecutePayoutArgs {
  opId: OpId;
  amount: bigint;
  opBump: number;
}

/** The arguments as the IDL names them, checked first: a u64 amount, a u8 bump (the coder would wrap or throw). */
function executePayoutArgs(args: ExecutePayoutArgs): Record<string, unknown> {
  if (args.amount < 0n || args.amount > U64_MAX) throw new OncepayError(AMOUNT_CODES.OUT_OF_RANGE);
  if (!Number.isInteger(args.opBump) || args.opBump < 0 || args.opBump > 255) {
    throw new OncepayError(PAYOUT_CODES.BUMP_INVALID);
  }
  return { op_id: opIdBytes(args.opId), amount: u64Arg(args.amount), op_bump: args.opBump };
}

/** execute_payout's instruction data: the IDL's discriminator and its Borsh-encoded (op_id, amount, op_bump). */
export function encodeExecutePayoutData(args: ExecutePayoutArgs): Buffer {
  return encodeInstructionData('execute_payout', executePayoutArgs(args));
}

export function executePayoutInstruction(
  programId: PublicKey,
  accounts: ExecutePayoutAccounts,
  args: ExecutePayoutArgs,
): TransactionInstruction {
  return programInstruction(
    programId,
    'execute_payout',
    {
      payout_authority: accounts.payoutAuthority,
      payer: accounts.payer,
      merchant: accounts.merchant,
      operation: accounts.operation,
      vault: accounts.vault,
      mint: accounts.mint,
      recipient_token: accounts.recipientToken,
      token_program: accounts.tokenProgram,
    },
    executePayoutArgs(args),
  );
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

export const OP_ACCOUNT_NAME = 'Operation';
/** The op account's size: discriminator and fields, as the IDL lays them out. */
export const OP_ACCOUNT_LEN = accountSize(OP_ACCOUNT_NAME);
export const OP_ACCOUNT_DISCRIMINATOR = accountDiscriminator(OP_ACCOUNT_NAME);

/** The fields of the IDL's Operation type, as the coder decodes them. */
interface OperationFields {
  op_id: number[];
  merchant: PublicKey;
  recipient: PublicKey;
  mint: PublicKey;
  amount: { toString(): string };
  slot: { toString(): string };
  bump: number;
}

/**
 * The op account's data. `discriminator` names another account type's (a test's way to read a look-alike); by
 * default the IDL's Operation discriminator must lead.
 */
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
  // The discriminator is checked above (perhaps another one, by request): the coder decodes the fields after it.
  const f = decodeAccountFields<OperationFields>(OP_ACCOUNT_NAME, b);
  return {
    opId: opId(Buffer.from(f.op_id)),
    merchant: address(f.merchant),
    recipient: address(f.recipient),
    mint: address(f.mint),
    amount: u64Value(f.amount),
    slot: u64Value(f.slot),
    bump: f.bump,
  };
}
