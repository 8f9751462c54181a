// Cross-site request forgery, two checks on every state-changing request (pure): the synchronizer token of the
// session must come back in the form (compared in constant time), and the Origin header — when the browser sends
// one, as every current browser does on a POST — must be this server's own. SameSite=Strict on the cookie is a
// third layer, not relied on alone.
import { randomBytes, timingSafeEqual } from 'node:crypto';

export const CSRF_FIELD = 'csrf';

export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

export function csrfTokenMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether a request's Origin (or, without one, its Referer) names this server: scheme + host as the request itself
 * was addressed (`host` header, `https` when behind TLS). Neither header: allowed (a non-browser client or a
 * privacy setting; the token still has to match). `Origin: null` (a sandboxed or file page) is refused.
 */
export function sameOrigin(headers: { origin?: string; referer?: string; host?: string }, secure: boolean): boolean {
  const claimed = headers.origin ?? headers.referer;
  if (claimed === undefined) return true;
  if (!headers.host) return false;
  let url: URL;
  try {
    url = new URL(claimed);
  } catch {
    return false;
  }
  return url.host === headers.host && url.protocol === (secure ? 'https:' : 'http:');
}
