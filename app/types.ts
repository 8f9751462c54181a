// Branded identifiers of the payout SDK, each with its guard trio (isX / assertIsX / x()).
// A brand only exists at compile time: the runtime value is the plain string.
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { OncepayError } from '../common/errors';
import { PAYOUT_CODES } from '../common/errors/codes';

declare const brand: unique symbol;
export type Brand<T, Name extends string> = T & { readonly [brand]: Name };

/** A Solana account address: base58 of exactly 32 bytes. */
export type Address = Brand<string, 'Address'>;
/** A transaction signature: base58 of exactly 64 bytes. */
export type Signature = Brand<string, 'Signature'>;
/** The merchant's own payout id (the business operation), 1–200 UTF-8 bytes, no control characters. */
export type PayoutId = Brand<string, 'PayoutId'>;

function base58Length(x: string): number | undefined {
  try {
    return bs58.decode(x).length;
  } catch {
    return undefined;
  }
}

export function isAddress(x: unknown): x is Address {
  return typeof x === 'string' && x.length >= 32 && x.length <= 44 && base58Length(x) === 32;
}
export function assertIsAddress(x: unknown, what = 'address'): asserts x is Address {
  if (!isAddress(x))
    throw new OncepayError(
      PAYOUT_CODES.ADDRESS_MALFORMED,
      `${what} is not a base58 32-byte address: ${JSON.stringify(x)}`,
      // `field`: the argument it came in as (the SDK's name for it), as every refusal of bad input names it.
      { what, field: what },
    );
}
export function address(x: string | PublicKey, what?: string): Address {
  const s = typeof x === 'string' ? x : x.toBase58();
  assertIsAddress(s, what);
  return s;
}

export function isSignature(x: unknown): x is Signature {
  return typeof x === 'string' && x.length >= 64 && x.length <= 88 && base58Length(x) === 64;
}
export function assertIsSignature(x: unknown): asserts x is Signature {
  if (!isSignature(x))
    throw new OncepayError(PAYOUT_CODES.SIGNATURE_MALFORMED, `not a base58 64-byte signature: ${JSON.stringify(x)}`);
}
export function signature(x: string | Uint8Array): Signature {
  const s = typeof x === 'string' ? x : bs58.encode(x);
  assertIsSignature(s);
  return s;
}

export const PAYOUT_ID_MAX_BYTES = 200;
// Control characters are refused so an id copied through logs, CSVs and terminals stays the same bytes.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

export function isPayoutId(x: unknown): x is PayoutId {
  if (typeof x !== 'string' || x.length === 0 || CONTROL.test(x)) return false;
  const n = Buffer.byteLength(x, 'utf8');
  // A lone surrogate would be replaced by U+FFFD when encoded: the bytes would not round-trip.
  return n <= PAYOUT_ID_MAX_BYTES && Buffer.from(x, 'utf8').toString('utf8') === x;
}
export function assertIsPayoutId(x: unknown): asserts x is PayoutId {
  if (!isPayoutId(x)) {
    throw new OncepayError(
      PAYOUT_CODES.ID_MALFORMED,
      `payoutId must be 1–${PAYOUT_ID_MAX_BYTES} bytes of valid UTF-8 without control characters: ${JSON.stringify(x)}`,
      { field: 'payoutId' },
    );
  }
}
export function payoutId(x: string): PayoutId {
  assertIsPayoutId(x);
  return x;
}
