// Graceful shutdown for every long-running command. SIGTERM or SIGINT aborts `signal`: the command stops taking
// new work (fastify close, no new claim or pass), lets what is in flight finish, closes its pool and returns, and
// the process exits 0. The drain is bounded: if it has not finished `graceMs` after the signal (or a second
// signal arrives), the process exits 0 anyway and what was still running is handed back to the database — an
// open transaction rolls back, an outbox row's lease expires and it is delivered again with the same
// Idempotency-Key, an Idempotency-Key held by the closed session is free for the client's retry.
import type { Logger } from 'pino';
import { OncepayError, PROCESS_CODES } from '../common/errors';

/** Default bound between SIGTERM and exit (commands with longer steps pass their own, and say so in --help). */
export const DEFAULT_GRACE_MS = 10_000;

export interface StopSignal {
  signal: AbortSignal;
  /** Resolves when a stop signal arrived. */
  stopped: Promise<void>;
  /** Remove the signal handlers (the command is done). */
  dispose(): void;
}

export function onStopSignals(log: Logger, graceMs: number = DEFAULT_GRACE_MS): StopSignal {
  const ac = new AbortController();
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  const handler = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) return forceExit(`second ${sig}`);
    log.info({ signal: sig, graceMs }, 'stopping after the current step');
    ac.abort(new OncepayError(PROCESS_CODES.STOPPED_BY_SIGNAL, `stopped by ${sig}`));
    resolveStopped();
    // unref: a drain that finishes in time lets the process end on its own.
    setTimeout(() => forceExit(`drain took longer than ${graceMs} ms`), graceMs).unref();
  };
  const forceExit = (why: string) => {
    log.warn(
      { why },
      'exiting now; unfinished work is handed back to the database (transactions roll back, leases expire)',
    );
    process.exit(0);
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return {
    signal: ac.signal,
    stopped,
    dispose() {
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    },
  };
}

/** The --help paragraph of a long-running command: what SIGTERM does and within which bound. */
export function shutdownHelp(
  bound: string = `${DEFAULT_GRACE_MS / 1000} s`,
  drain = 'stops taking work and finishes what is in flight',
): string {
  return `\nSIGTERM / SIGINT: ${drain}, closes its database pool and exits 0 within ${bound}; work still running then is handed back to the database (transactions roll back, leases expire). A database outage does not end the process: it backs off and recovers by itself.`;
}
