// X-Oncepay-Signature: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. The timestamp is inside
// the MAC so a captured request cannot be replayed later with a fresh header; the receiver checks its age.
import * as crypto from 'crypto';

export const SIGNATURE_HEADER = 'x-oncepay-signature';

export function signBody(secret: string, timestamp: number, body: string): string {
  const mac = crypto.createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/** For receivers (and tests): true when the header is a valid MAC of this body, at most `toleranceSeconds` old. */
export function verifySignature(
  secret: string,
  header: string,
  body: string,
  opts: { nowSeconds: number; toleranceSeconds?: number },
): boolean {
  const parts = new Map(header.split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1');
  if (!Number.isSafeInteger(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(opts.nowSeconds - t) > (opts.toleranceSeconds ?? 300)) return false;
  const want = Buffer.from(signBody(secret, t, body).split('v1=')[1], 'hex');
  return crypto.timingSafeEqual(want, Buffer.from(v1, 'hex'));
}
