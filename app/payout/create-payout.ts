// Store a payout row for a merchant: the op_id and op PDA are derived here, once, from durable data only.
import { Pool, PoolClient } from 'pg';
import { BaseUnits, U64_MAX, assertIsBaseUnits, baseUnits } from '../../common/amount';
import { OncepayError } from '../../common/errors';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { deriveOperation } from '../op-id';
import { address, payoutId as toPayoutId } from '../types';
import { MerchantRow } from '../merchant/store';
import { PayoutRow, insertPayout } from './store';

export interface PayoutInput {
  payoutId: string;
  /** Recipient token account (base58). */
  recipient: string;
  mint: string;
  /** Base units as a decimal string or bigint (never a JS number). */
  amount: string | bigint;
}

/** Like baseUnits, but a well-formed decimal of any length beyond u64 is "out of range", not "malformed". */
export function parseAmount(x: string | bigint): BaseUnits {
  if (typeof x === 'string' && /^[1-9][0-9]{20,}$/.test(x)) {
    const v = BigInt(x);
    if (v > U64_MAX) assertIsBaseUnits(v); // throws ONCEPAY__AMOUNT__OUT_OF_RANGE
  }
  return baseUnits(x);
}

/** Validate and derive everything the row needs; throws OncepayError with a specific code on bad input. */
export function preparePayout(merchant: MerchantRow, input: PayoutInput) {
  const pid = toPayoutId(input.payoutId);
  const recipient = address(input.recipient, 'recipient');
  const mint = address(input.mint, 'mint');
  const amount = parseAmount(input.amount);
  // The program refuses 0 (InvalidAmount): say so before anything is stored or signed.
  if (amount === 0n) throw new OncepayError(PAYOUT_CODES.AMOUNT_ZERO, 'a payout amount must be at least 1 base unit');
  const op = deriveOperation({ programId: merchant.programId, merchant: merchant.merchantAddress, payoutId: pid });
  return {
    merchantId: merchant.id,
    merchantPayoutId: pid,
    programId: merchant.programId,
    merchantAddress: merchant.merchantAddress,
    vault: merchant.vault,
    tokenProgram: merchant.tokenProgram,
    recipientToken: recipient,
    mint,
    amount,
    opId: op.opId,
    opPda: op.opPda,
    opBump: op.opBump,
  };
}

/** Same terms as an existing row? (A retry of the same business operation, not a new one.) */
export function sameTerms(row: PayoutRow, p: ReturnType<typeof preparePayout>): boolean {
  return row.recipientToken === p.recipientToken && row.mint === p.mint && row.amount === p.amount;
}

export async function createPayout(
  db: Pool | PoolClient,
  merchant: MerchantRow,
  input: PayoutInput,
): Promise<{ row: PayoutRow; created: boolean }> {
  return insertPayout(db, preparePayout(merchant, input));
}
