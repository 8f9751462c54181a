// Operation ids from durable rows (see docs/op-id.md). Pure: the same (program, merchant, payout id) gives the
// same op_id in every process, forever. Nothing here reads a clock or a random source.
import { createHash } from 'crypto';
import { PublicKey } from '@solana/web3.js';
import { OncepayError } from '../common/errors';
import { PAYOUT_CODES } from '../common/errors/codes';
import { Address, Brand, PayoutId, address, assertIsAddress, assertIsPayoutId } from './types';

/** Domain separator: a new derivation gets a new version, never a silent change. */
export const OP_ID_DOMAIN = 'oncepay:payout:v1';
export const OP_SEED = 'op';

/** 32 bytes as 64 lowercase hex characters. */
export type OpId = Brand<string, 'OpId'>;

export function isOpId(x: unknown): x is OpId {
  return typeof x === 'string' && /^[0-9a-f]{64}$/.test(x);
}
export function assertIsOpId(x: unknown): asserts x is OpId {
  if (!isOpId(x))
    throw new OncepayError(
      PAYOUT_CODES.OP_ID_MALFORMED,
      `op id must be 64 lowercase hex characters: ${JSON.stringify(x)}`,
    );
}
/** From hex (any case) or 32 raw bytes. */
export function opId(x: string | Uint8Array): OpId {
  const s = typeof x === 'string' ? x.toLowerCase() : Buffer.from(x).toString('hex');
  assertIsOpId(s);
  return s;
}
export function opIdBytes(id: OpId): Buffer {
  return Buffer.from(id, 'hex');
}

export interface OpIdInput {
  programId: Address | string;
  /** The merchant config account (PDA ["merchant", merchant_authority]), not the authority. */
  merchant: Address | string;
  payoutId: PayoutId | string;
}

/** op_id = sha256("oncepay:payout:v1" ‖ program_id[32] ‖ merchant[32] ‖ utf8(payout_id)). */
export function deriveOpId(input: OpIdInput): OpId {
  if (typeof input !== 'object' || input === null)
    throw new OncepayError(PAYOUT_CODES.OPTION_INVALID, 'input must be { programId, merchant, payoutId }', {
      field: 'input',
    });
  assertIsAddress(input.programId, 'programId');
  assertIsAddress(input.merchant, 'merchant');
  assertIsPayoutId(input.payoutId);
  const h = createHash('sha256');
  h.update(Buffer.from(OP_ID_DOMAIN, 'utf8'));
  h.update(new PublicKey(input.programId).toBuffer());
  h.update(new PublicKey(input.merchant).toBuffer());
  h.update(Buffer.from(input.payoutId, 'utf8'));
  return opId(h.digest());
}

export interface OpPda {
  address: Address;
  bump: number;
}

/** The op account: PDA(["op", merchant, op_id], program_id) with the canonical (highest valid) bump. */
export function deriveOpPda(input: { programId: Address | string; merchant: Address | string; opId: OpId }): OpPda {
  assertIsAddress(input.programId, 'programId');
  assertIsAddress(input.merchant, 'merchant');
  assertIsOpId(input.opId);
  const [pda, bump] = PublicKey.findProgramAddressSync(
    [Buffer.from(OP_SEED, 'utf8'), new PublicKey(input.merchant).toBuffer(), opIdBytes(input.opId)],
    new PublicKey(input.programId),
  );
  return { address: address(pda), bump };
}

/** Both at once, as `oncepay payout opid` prints them. */
export function deriveOperation(input: OpIdInput): { opId: OpId; opPda: Address; opBump: number } {
  const id = deriveOpId(input);
  const pda = deriveOpPda({ programId: input.programId, merchant: input.merchant, opId: id });
  return { opId: id, opPda: pda.address, opBump: pda.bump };
}
