// Reading untyped RPC JSON: type guards that throw ONCEPAY__DECODE__MALFORMED_TRANSACTION naming the field.
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';

export type Json = Record<string, unknown>;

export function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function malformed(what: string, context: Record<string, unknown> = {}): OncepayError {
  return new OncepayError(DECODE_CODES.MALFORMED_TRANSACTION, what, context);
}

export function record(parent: Json, field: string, path: string): Json {
  const v = parent[field];
  if (!isRecord(v)) throw malformed(`${path}.${field} is not an object`);
  return v;
}

export function array(parent: Json, field: string, path: string): unknown[] {
  const v = parent[field];
  if (!Array.isArray(v)) throw malformed(`${path}.${field} is not an array`);
  return v;
}

export function optionalArray(parent: Json, field: string, path: string): unknown[] {
  const v = parent[field];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw malformed(`${path}.${field} is not an array`);
  return v;
}

export function isIndex(v: unknown, length: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < length;
}

export function isAddress(v: unknown): v is string {
  return typeof v === 'string' && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(v);
}

/** Run `f`, prefixing any decode error that does not yet say where with `path`. */
export function withPath<T>(path: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof OncepayError && e.context.path === undefined) {
      throw new OncepayError(e.code, `${path}: ${e.message.replace(`${e.code}: `, '')}`, { ...e.context, path });
    }
    throw e;
  }
}

/** A short rendering of any value for an error message; never throws (bigints, cycles, functions). */
export function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  try {
    const s = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));
    if (s === undefined) return String(v);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return Object.prototype.toString.call(v);
  }
}
