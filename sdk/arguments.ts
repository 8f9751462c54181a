// Every public OncePay method checks its arguments here, first, before it reads or writes anything: a bad argument
// is an OncepayError with a stable code and the argument's name (`context.field`, and the message starts with
// it), never web3.js's bare "Invalid public key input" or a TypeError from deep inside. Pure: no I/O.
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { OncepayError } from '../common/errors';
import { AMOUNT_CODES, PAYOUT_CODES, SDK_CODES } from '../common/errors/codes';
import { U64_MAX } from '../common/amount';
import { isPayoutId, PAYOUT_ID_MAX_BYTES } from '../app/types';

const show = (v: unknown): string => {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v.length > 100 ? `${v.slice(0, 100)}…` : v);
  if (v instanceof PublicKey) return v.toBase58();
  if (v === null || v === undefined || typeof v !== 'object') return String(v);
  return v.constructor?.name ?? 'object';
};

/** An argument that is not what the method takes: ONCEPAY__SDK__ARGUMENT_INVALID naming it. */
export function invalid(field: string, expected: string, got: unknown): OncepayError {
  return new OncepayError(SDK_CODES.ARGUMENT_INVALID, `${field} must be ${expected}, got ${show(got)}`, { field });
}

/** An options object (possibly optional): a plain object, never a primitive or an array. */
export function objectArg<T extends object>(v: T | undefined, field: string, optional: true): Partial<T>;
export function objectArg<T extends object>(v: T, field: string): T;
export function objectArg<T extends object>(v: T | undefined, field: string, optional = false): T | Partial<T> {
  if (v === undefined && optional) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(field, 'an object', v);
  return v;
}

/** A Solana address: a PublicKey, or base58 of exactly 32 bytes. */
export function pubkeyArg(v: unknown, field: string): PublicKey {
  if (v instanceof PublicKey) return v;
  if (typeof v === 'string' && v.length >= 32 && v.length <= 44) {
    try {
      if (bs58.decode(v).length === 32) return new PublicKey(v);
    } catch {
      // not base58: refused below
    }
  }
  throw new OncepayError(
    PAYOUT_CODES.ADDRESS_MALFORMED,
    `${field} must be a PublicKey or a base58 32-byte address, got ${show(v)}`,
    { field },
  );
}

export function optionalPubkeyArg(v: unknown, field: string): PublicKey | undefined {
  return v === undefined ? undefined : pubkeyArg(v, field);
}

/** A web3.js Keypair (a signer): its secret key is never read from a string here. */
export function keypairArg(v: unknown, field: string): Keypair {
  if (v instanceof Keypair) return v;
  throw new OncepayError(PAYOUT_CODES.KEYPAIR_MALFORMED, `${field} must be a web3.js Keypair, got ${show(v)}`, {
    field,
  });
}

export function optionalKeypairArg(v: unknown, field: string): Keypair | undefined {
  return v === undefined ? undefined : keypairArg(v, field);
}

/** One Keypair, or a non-empty list of them (a worker signing for several merchants). */
export function keypairsArg(v: unknown, field: string): Keypair[] {
  if (Array.isArray(v)) {
    if (v.length === 0) throw invalid(field, 'a Keypair or a non-empty list of Keypairs', v);
    return v.map((k, i) => keypairArg(k, `${field}[${i}]`));
  }
  return [keypairArg(v, field)];
}

/** A row id (a payout's or an exception's): decimal digits, as the database gives them. */
export function rowIdArg(v: unknown, field: string): string {
  if (typeof v === 'string' && /^[0-9]{1,18}$/.test(v)) return v;
  throw invalid(field, 'a row id (a string of digits)', v);
}

/** A merchant's own payout id: 1–200 bytes of UTF-8 without control characters. */
export function payoutIdArg(v: unknown, field: string): string {
  if (isPayoutId(v)) return v;
  throw new OncepayError(
    PAYOUT_CODES.ID_MALFORMED,
    `${field} must be 1–${PAYOUT_ID_MAX_BYTES} bytes of UTF-8 without control characters, got ${show(v)}`,
    { field },
  );
}

/** An amount of base units: a bigint in 0..u64::MAX (never a JS number, which cannot hold every u64). */
export function amountArg(v: unknown, field: string): bigint {
  if (typeof v !== 'bigint')
    throw new OncepayError(AMOUNT_CODES.MALFORMED, `${field} must be a bigint of base units, got ${show(v)}`, {
      field,
    });
  if (v < 0n || v > U64_MAX)
    throw new OncepayError(AMOUNT_CODES.OUT_OF_RANGE, `${field} must be in 0..u64::MAX, got ${show(v)}`, { field });
  return v;
}

export function stringArg(v: unknown, field: string, o: { optional?: boolean; nonEmpty?: boolean } = {}) {
  if (v === undefined && o.optional) return undefined;
  if (typeof v !== 'string' || (o.nonEmpty && v.trim() === ''))
    throw invalid(field, o.nonEmpty ? 'a non-empty string' : 'a string', v);
  return v;
}

export function booleanArg(v: unknown, field: string): boolean {
  if (typeof v !== 'boolean') throw invalid(field, 'true or false', v);
  return v;
}

export function optionalBooleanArg(v: unknown, field: string): boolean | undefined {
  return v === undefined ? undefined : booleanArg(v, field);
}

/** A whole number ≥ min (counts, milliseconds). */
export function intArg(v: unknown, field: string, min: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw invalid(field, `an integer ≥ ${min}`, v);
  return v;
}

export function optionalIntArg(v: unknown, field: string, min: number): number | undefined {
  return v === undefined ? undefined : intArg(v, field, min);
}

export function oneOfArg<T extends string>(v: unknown, field: string, values: readonly T[]): T {
  if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
  throw invalid(field, `one of ${values.join(', ')}`, v);
}

export function optionalOneOfArg<T extends string>(v: unknown, field: string, values: readonly T[]): T | undefined {
  return v === undefined ? undefined : oneOfArg(v, field, values);
}

export function functionArg<F>(v: F | undefined, field: string): F | undefined {
  if (v !== undefined && typeof v !== 'function') throw invalid(field, 'a function', v);
  return v;
}

export function abortSignalArg(v: unknown, field: string): AbortSignal | undefined {
  if (v === undefined || v instanceof AbortSignal) return v;
  throw invalid(field, 'an AbortSignal', v);
}

export function connectionArg(v: unknown, field: string): Connection | undefined {
  if (v === undefined || v instanceof Connection) return v;
  throw invalid(field, 'a web3.js Connection', v);
}

/** An http(s) URL (an RPC endpoint); a postgres(ql) URL (a database). */
export function urlArg(v: unknown, field: string, protocols: readonly string[]): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'string') {
    try {
      if (protocols.includes(new URL(v).protocol)) return v;
    } catch {
      // not a URL: refused below
    }
  }
  // The value is not shown: a URL may carry a password or an API key.
  throw new OncepayError(SDK_CODES.ARGUMENT_INVALID, `${field} must be a ${protocols.join(' or ')} URL`, { field });
}
