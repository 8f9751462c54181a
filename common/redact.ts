// URLs as they may be shown: in a log line, an error message, a `--help` or a status output. An RPC, database,
// websocket or gRPC URL often carries a credential — a password in its userinfo (`postgres://u:pw@host`), an API key
// in its query (`?api-key=…`, Helius) or as a path token (`/v2/<key>`, QuickNode, Alchemy) — so every URL shown goes
// through here: userinfo becomes `***`, every query value `***`, a fragment `***`, and a path segment that looks like
// a token (20+ letters, digits, `-` or `_`, with both letters and digits) `***`. Host, port, path words and query
// keys stay, so an operator still sees which endpoint is meant. Pure.

const REDACTED = '***';

/** A path segment that looks like an API key rather than a word of the API's path. */
function isTokenLike(segment: string): boolean {
  return segment.length >= 20 && /^[A-Za-z0-9_-]+$/.test(segment) && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment);
}

/** One URL with its credentials replaced; a string that is not a URL comes back as `***` (it might be one). */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return REDACTED;
  }
  const segments = u.pathname.split('/');
  if (!u.username && !u.password && !u.search && !u.hash && !segments.some(isTokenLike)) return url; // nothing to hide
  if (u.username) u.username = REDACTED;
  if (u.password) u.password = REDACTED;
  const keys = [...new Set(u.searchParams.keys())];
  const query = keys.length > 0 ? `?${keys.map((k) => `${encodeURIComponent(k)}=${REDACTED}`).join('&')}` : '';
  const path = segments.map((s) => (isTokenLike(s) ? REDACTED : s)).join('/');
  // Rebuilt by hand: URL would percent-encode the `*` of a redacted query or path.
  const auth = u.username || u.password ? `${u.username}${u.password ? `:${u.password}` : ''}@` : '';
  const origin = u.host ? `${u.protocol}//${auth}${u.host}` : `${u.protocol}`;
  return `${origin}${path}${query}${u.hash ? `#${REDACTED}` : ''}`.replace(/%2A%2A%2A/g, REDACTED);
}

/** Every URL inside a free text (an error message, a log message) redacted as redactUrl does. */
export function redactUrlsIn(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(/\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s"'<>`]+/g, (m) => {
    // Trailing punctuation of the sentence is not part of the URL.
    const trail = /[).,;:!?\]]+$/.exec(m)?.[0] ?? '';
    return redactUrl(m.slice(0, m.length - trail.length)) + trail;
  });
}

/** True when showing `url` as is would show a credential (what redactUrl would hide). */
export function urlCarriesSecret(url: string): boolean {
  return redactUrl(url) !== url;
}
