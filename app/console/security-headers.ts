// The headers every console response carries (a pure table, applied by an onSend hook of the console's context).
// The pages are server-rendered HTML forms with one stylesheet from the same origin: no script, no frame, no
// inline style, so the policy allows nothing else.

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  // same-origin, not no-referrer: under no-referrer chromium sends `Origin: null` on a form POST, which the CSRF
  // Origin check must refuse. Nothing leaves for another site either way (explorer links get no Referer).
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  // Pages show live money state and carry a CSRF token: never from a cache.
  'cache-control': 'no-store',
};
