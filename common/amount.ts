// Token amounts are u64 base units: bigint in TypeScript, decimal strings in JSON, NUMERIC(20,0) in Postgres.
// A JS number never holds an amount.
import { AMOUNT_CODES, OncepayError } from './errors';

export const U64_MAX = (1n << 64n) - 1n;

declare const baseUnitsBrand: unique symbol;
/** An amount of token base units (or lamports), 0 ≤ x ≤ u64::MAX. */
export type BaseUnits = bigint & { readonly [baseUnitsBrand]: 'BaseUnits' };

export function isBaseUnits(x: unknown): x is BaseUnits {
  return typeof x === 'bigint' && x >= 0n && x <= U64_MAX;
}

export function assertIsBaseUnits(x: unknown): asserts x is BaseUnits {
  if (!isBaseUnits(x)) {
    throw new OncepayError(AMOUNT_CODES.OUT_OF_RANGE, `amount ${String(x)} is not a u64`, { amount: String(x) });
  }
}

/** Parse a decimal string (or bigint) into base units; rejects numbers, signs, decimals, exponents and > u64. */
export function baseUnits(x: string | bigint): BaseUnits {
  if (typeof x === 'bigint') {
    assertIsBaseUnits(x);
    return x;
  }
  if (typeof x !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(x)) {
    throw new OncepayError(
      AMOUNT_CODES.MALFORMED,
      `amount must be a decimal string of base units, got ${JSON.stringify(x)}`,
    );
  }
  const v = BigInt(x);
  assertIsBaseUnits(v);
  return v;
}
