// Pure webhook authentication.
//
// The scheme: `X-Oncepay-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. Several
// `v1=` values may be sent (the sender signs with the old and the new secret while rotating), and several secrets
// may be configured here: one match of any v1 with any secret authenticates. The timestamp is covered by the HMAC
// and must be within `toleranceS` of now, so a captured delivery replayed later is refused
// (TIMESTAMP_OUTSIDE_WINDOW); within the window the event-id dedup answers a replay as the duplicate it is.
//
// Deprecated (only with `legacy: true`, i.e. `--legacy-signature`): `X-Oncepay-Signature: sha256=<hex HMAC over
// the raw body>` (no timestamp: replayable forever) and the bare secret as `X-Oncepay-Secret: S` or
// `Authorization: [Bearer ]S`. Every legacy credential presented must be right, and with `requireSignature` the
// legacy HMAC must be present.
//
// Every comparison is constant-time on SHA-256 digests of equal length, so neither content nor length of an
// expected value leaks through timing.
import * as crypto from 'crypto';

export const SECRET_HEADER = 'x-oncepay-secret';
export const SIGNATURE_HEADER = 'x-oncepay-signature';
export const DEFAULT_TOLERANCE_S = 300;

export interface AuthConfig {
  secrets: readonly string[];
  /** Largest |now − t| accepted, in seconds. */
  toleranceS?: number;
  /** Also accept the deprecated schemes (no timestamp). */
  legacy?: boolean;
  /** Legacy mode: demand the legacy HMAC (a bare secret is not enough). */
  requireSignature?: boolean;
}

export type AuthFailure =
  | 'no_credentials'
  | 'malformed_signature'
  | 'bad_signature'
  | 'timestamp_outside_window'
  | 'legacy_scheme'
  | 'bad_secret'
  | 'signature_required';
export type AuthResult = { ok: true; via: 'v1' | 'legacy' } | { ok: false; reason: AuthFailure };

export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const da = crypto.createHash('sha256').update(a).digest();
  const db = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(da, db);
}

function hmacHex(secret: string, parts: Array<string | Buffer>): string {
  const h = crypto.createHmac('sha256', secret);
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

/** The header value a sender puts on `raw` at unix time `t`, one v1 per secret (rotation: old and new). */
export function signDelivery(secrets: string | readonly string[], raw: Buffer | string, t: number): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${t}`, ...list.map((s) => `v1=${hmacHex(s, [`${t}.`, raw])}`)].join(',');
}

/** Deprecated scheme: `sha256=<hex HMAC over the raw body>`. */
export function signBodyLegacy(secret: string, raw: Buffer | string): string {
  return `sha256=${hmacHex(secret, [raw])}`;
}

/** `t=…,v1=…[,v1=…]` → its parts, or null if it is not that scheme or is malformed. Unknown keys are ignored. */
export function parseSignatureHeader(value: string): { t: number; v1: string[] } | null {
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't') {
      if (t !== null || !/^[0-9]{1,12}$/.test(v)) return null;
      t = Number(v);
    } else if (k === 'v1') {
      if (!/^[0-9a-fA-F]{64}$/.test(v)) return null;
      v1.push(v.toLowerCase());
    }
  }
  return t === null || v1.length === 0 || v1.length > 8 ? null : { t, v1 };
}

function one(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}

function authenticateLegacy(
  cfg: AuthConfig,
  headers: Record<string, string | string[] | undefined>,
  raw: Buffer,
): AuthResult {
  const matchesASecret = (presented: string, expected: (s: string) => string) => {
    let ok = false;
    for (const s of cfg.secrets) ok = constantTimeEqual(presented, expected(s)) || ok; // no early exit
    return ok;
  };
  let signed = false;
  let any = false;
  const sig = one(headers[SIGNATURE_HEADER]);
  if (sig !== undefined) {
    if (!matchesASecret(sig.trim().toLowerCase(), (s) => signBodyLegacy(s, raw)))
      return { ok: false, reason: 'bad_signature' };
    signed = true;
    any = true;
  }
  const authz = one(headers.authorization);
  for (const presented of [
    one(headers[SECRET_HEADER]),
    authz === undefined ? undefined : authz.replace(/^Bearer\s+/i, ''),
  ]) {
    if (presented === undefined) continue;
    if (!matchesASecret(presented, (s) => s)) return { ok: false, reason: 'bad_secret' };
    any = true;
  }
  if (!any) return { ok: false, reason: 'no_credentials' };
  if (cfg.requireSignature && !signed) return { ok: false, reason: 'signature_required' };
  return { ok: true, via: 'legacy' };
}

/**
 * What the headers alone already decide, before a byte of the body is read: the failure `authenticate` would give
 * whatever the body (no credentials at all, a malformed signature header, a legacy scheme while legacy is off), or
 * null when only the body can tell. A request refused here costs no body buffer.
 */
export function precheckCredentials(
  cfg: AuthConfig,
  headers: Record<string, string | string[] | undefined>,
): AuthFailure | null {
  if (cfg.secrets.length === 0) return 'no_credentials';
  const sig = one(headers[SIGNATURE_HEADER]);
  const timestamped = sig !== undefined && /(^|,)\s*(t|v1)=/.test(sig);
  if (timestamped) return parseSignatureHeader(sig!) ? null : 'malformed_signature';
  const presentedLegacy =
    sig !== undefined || headers[SECRET_HEADER] !== undefined || headers.authorization !== undefined;
  if (!presentedLegacy) return 'no_credentials';
  return cfg.legacy ? null : 'legacy_scheme';
}

/** Authenticate a delivery's raw bytes at unix time `nowS`. */
export function authenticate(
  cfg: AuthConfig,
  headers: Record<string, string | string[] | undefined>,
  raw: Buffer,
  nowS: number,
): AuthResult {
  if (cfg.secrets.length === 0) return { ok: false, reason: 'no_credentials' };
  const sig = one(headers[SIGNATURE_HEADER]);
  const timestamped = sig !== undefined && /(^|,)\s*(t|v1)=/.test(sig);
  if (!timestamped) {
    if (cfg.legacy) return authenticateLegacy(cfg, headers, raw);
    const presentedLegacy =
      sig !== undefined || headers[SECRET_HEADER] !== undefined || headers.authorization !== undefined;
    return { ok: false, reason: presentedLegacy ? 'legacy_scheme' : 'no_credentials' };
  }
  const parsed = parseSignatureHeader(sig!);
  if (!parsed) return { ok: false, reason: 'malformed_signature' };
  let matched = false;
  for (const secret of cfg.secrets) {
    const expected = hmacHex(secret, [`${parsed.t}.`, raw]);
    for (const v of parsed.v1) matched = constantTimeEqual(v, expected) || matched; // no early exit
  }
  if (!matched) return { ok: false, reason: 'bad_signature' };
  // Checked after the HMAC: only a genuine (if old) delivery learns that its timestamp is the problem.
  if (Math.abs(nowS - parsed.t) > (cfg.toleranceS ?? DEFAULT_TOLERANCE_S))
    return { ok: false, reason: 'timestamp_outside_window' };
  return { ok: true, via: 'v1' };
}
