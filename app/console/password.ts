// Operator passwords: Node's scrypt (RFC 7914) with a random salt; the stored text carries its own parameters
// (`scrypt$N$r$p$salt$hash`, base64url), so raising the cost later leaves old hashes readable. Verification compares
// in constant time. A name that has no operator is checked against a fixed dummy hash, so the answer takes as long
// as for a real one (no timing oracle telling which names exist).
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const KEY_LEN = 32;
/** N = 2^15, r = 8, p = 1: OWASP's scrypt floor; about 32 MiB and tens of milliseconds per check. */
export const SCRYPT_PARAMS = { N: 1 << 15, r: 8, p: 1 } as const;

function scrypt(password: string, salt: Buffer, o: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: 128 * o.N * o.r * 2 };
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize('NFC'), salt, KEY_LEN, opts, (e, key) => (e ? reject(e) : resolve(key))),
  );
}

export async function hashPassword(
  password: string,
  params: { N: number; r: number; p: number } = SCRYPT_PARAMS,
): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` matches `stored`; a malformed stored text matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{40,})$/.exec(stored);
  if (!m) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const expected = Buffer.from(m[5], 'base64url');
  const key = await scrypt(password, Buffer.from(m[4], 'base64url'), { N, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let dummy: Promise<string> | undefined;
/** A hash of nothing anyone knows, computed once: what an unknown name is checked against. */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(24).toString('base64url'));
  return dummy;
}

/** A password for a new operator when none is given: 24 random bytes, base64url (192 bits). */
export function generatePassword(): string {
  return randomBytes(24).toString('base64url');
}
