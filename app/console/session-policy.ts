// When a console session ends (pure: no clock, no I/O). A session has an absolute limit from its creation and an
// idle limit from its last request; whichever comes first ends it. The cookie's attributes are decided here too.

export interface SessionLimits {
  /** From login; nothing extends it. Default 8 h (a working day). */
  absoluteMs: number;
  /** Since the last request. Default 30 min. */
  idleMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { absoluteMs: 8 * 3600_000, idleMs: 30 * 60_000 };

export interface SessionTimes {
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

export type SessionVerdict = 'live' | 'expired' | 'idle';

export function sessionVerdict(s: SessionTimes, now: Date, limits: SessionLimits): SessionVerdict {
  if (now.getTime() >= s.expiresAt.getTime()) return 'expired';
  if (now.getTime() - s.lastSeenAt.getTime() >= limits.idleMs) return 'idle';
  return 'live';
}

export const SESSION_COOKIE = 'oncepay_console';

/**
 * The Set-Cookie attributes of the session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's
 * page sends it), Path=/console/ (no other route of the API sees it), Secure when the request came over TLS.
 */
export function sessionCookieOptions(secure: boolean, maxAgeMs: number) {
  return {
    httpOnly: true,
    sameSite: 'strict' as const,
    secure,
    path: '/console/',
    maxAge: Math.max(0, Math.floor(maxAgeMs / 1000)),
  };
}
