// Pure webhook authentication. Two ways, either or both:
//   - a shared secret sent as `X-Oncepay-Secret: <secret>` or `Authorization: <secret>` / `Authorization: Bearer <secret>`;
//   - `X-Oncepay-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>`.
// Every credential presented must be right (a wrong one is never outweighed by a right one), at least one must
// be presented, and with `requireSignature` the HMAC must be. Comparisons are constant-time on equal-length
// SHA-256 digests, so neither content nor length of the expected value leaks through timing.
import * as crypto from 'crypto';

export const SECRET_HEADER = 'x-oncepay-secret';
export const SIGNATURE_HEADER = 'x-oncepay-signature';

export interface AuthConfig {
  secret: string;
  requireSignature?: boolean;
}

export type AuthResult = { ok: true; via: Array<'secret' | 'signature'> } | { ok: false; reason: string };

export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const da = crypto.createHash('sha256').update(a).digest();
  const db = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(da, db);
}

export function signBody(secret: string, raw: Buffer | string): string {
  return `sha256=${crypto.createHmac('sha256', secret).update(raw).digest('hex')}`;
}

function one(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}

export function authenticate(cfg: AuthConfig, headers: Record<string, string | string[] | undefined>, raw: Buffer): AuthResult {
  const via: Array<'secret' | 'signature'> = [];
  const sig = one(headers[SIGNATURE_HEADER]);
  if (sig !== undefined) {
    if (!constantTimeEqual(sig.trim().toLowerCase(), signBody(cfg.secret, raw))) return { ok: false, reason: 'bad signature' };
    via.push('signature');
  }
  const plain = one(headers[SECRET_HEADER]);
  const authz = one(headers.authorization);
  for (const presented of [plain, authz === undefined ? undefined : authz.replace(/^Bearer\s+/i, '')]) {
    if (presented === undefined) continue;
    if (!constantTimeEqual(presented, cfg.secret)) return { ok: false, reason: 'bad secret' };
    if (!via.includes('secret')) via.push('secret');
  }
  if (via.length === 0) return { ok: false, reason: 'no credentials' };
  if (cfg.requireSignature && !via.includes('signature')) return { ok: false, reason: 'signature required' };
  return { ok: true, via };
}
