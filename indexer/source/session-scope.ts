// One session's lifetime (pure, no I/O): it ends on the caller's stop or on the first failure of anything it runs,
// and everything it awaits races that end, so no await outlives the session. The websocket source's session
// (ws-session.ts) runs inside one.
import { onStop } from './subscription-sink';
import { OncepayError, SOURCE_CODES } from '../../common/errors';

export interface SessionScope {
  /** Aborted when the session ends (stop or failure): every call the session makes takes it. */
  readonly signal: AbortSignal;
  /** Rejects once the session ends: with its first failure, or 'stopped'. */
  readonly ended: Promise<never>;
  /** Ends the session with `e` (the first failure wins; later ones, and any after a stop, are ignored). */
  fail(e: unknown): void;
  /** `p`, or the session's end, whichever comes first. */
  guard<T>(p: Promise<T>): Promise<T>;
  /** The failure that ended the session (null: none, or not ended). */
  failure(): unknown;
  /** Ends the session (if it has not ended) and stops listening to the caller's stop. */
  end(): void;
}

export function createSessionScope(stop: AbortSignal): SessionScope {
  const ac = new AbortController();
  let failure: unknown = null;
  const ended = new Promise<never>((_, reject) =>
    ac.signal.addEventListener('abort', () => reject(failure ?? new OncepayError(SOURCE_CODES.STOPPED, 'stopped')), {
      once: true,
    }),
  );
  ended.catch(() => undefined);
  const unlistenStop = onStop(stop, () => ac.abort());
  return {
    signal: ac.signal,
    ended,
    fail(e) {
      if (ac.signal.aborted) return;
      failure = e;
      ac.abort();
    },
    guard: <T>(p: Promise<T>): Promise<T> => Promise.race([p, ended]),
    failure: () => failure,
    end() {
      ac.abort();
      unlistenStop();
    },
  };
}
