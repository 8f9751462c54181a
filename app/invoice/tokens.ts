// Exact base units → a decimal string in tokens (what Solana Pay's `amount` and the checkout page show). Pure string
// arithmetic on a bigint: no float ever holds an amount.

import { OncepayError } from '../../common/errors';
import { AMOUNT_CODES } from '../../common/errors/codes';

/** SOL's decimals (lamports per SOL = 10^9). */
export const SOL_DECIMALS = 9;

/** `amount` base units of a mint with `decimals` decimals, as tokens: 1500000n, 6 → "1.5"; 1n, 9 → "0.000000001". */
export function tokensOf(amount: bigint, decimals: number): string {
  if (amount < 0n) throw new OncepayError(AMOUNT_CODES.OUT_OF_RANGE, 'amount must not be negative');
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255)
    throw new OncepayError(AMOUNT_CODES.OUT_OF_RANGE, 'decimals must be 0–255');
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}
