// One lease/backoff/dead-letter policy type, parameterised per queue. A queue is a business table whose rows are
// its jobs (outbox, webhook_hints, payouts: their state columns and UNIQUE rules carry docs/guarantees.md's
// promises, so the rows are never copied into a second job table). Pure: no I/O.
import type { BackoffPolicy } from '../../common/backoff';
import { backoffDelay } from '../../common/backoff';

/** The queues, also the `queue` label of the metrics (db/queue/metrics.ts). */
export const QUEUE_NAMES = ['outbox', 'webhook_hints', 'payouts'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/**
 * How a claim holds its rows until it settles them. `leaseMs`: the hold runs out after this long and another worker
 * may take the row over (a worker that died mid-job); `session`: the hold is the claiming database session's and
 * ends when its connection does (even by SIGKILL, with no wait). A queue has one or both.
 */
export interface Hold {
  leaseMs?: number;
  session: boolean;
}

/**
 * When a row that keeps failing stops being retried. `attempts`: it is dead-lettered (kept, for an operator's
 * replay) once `max` attempts failed; `age`: it is dropped once past its own expiry (a column the row was written
 * with); `never`: the business rules end it (`why` says which), retries only spread out.
 */
export type DeadLetter = { after: 'attempts'; max: number } | { after: 'age' } | { after: 'never'; why: string };

export interface QueuePolicy {
  queue: QueueName;
  /** Rows one claim takes at most. */
  batch: number;
  hold: Hold;
  /** The waits between a row's failed attempts (common/backoff.ts's rule). */
  backoff: BackoffPolicy;
  deadLetter: DeadLetter;
}

/** What a policy gets wrong, one line each (empty: none); the queue's owner throws it with its own code. */
export function policyProblems(p: QueuePolicy): string[] {
  const problems: string[] = [];
  const positive = (name: string, v: number, min = 0) => {
    if (!(typeof v === 'number' && Number.isFinite(v) && v >= min))
      problems.push(`${name} must be a number ≥ ${min}, got ${v}`);
  };
  positive('batch', p.batch, 1);
  if (p.hold.leaseMs !== undefined) positive('leaseMs', p.hold.leaseMs);
  if (p.hold.leaseMs === undefined && !p.hold.session) problems.push('a hold needs a lease, the session, or both');
  positive('backoff.baseMs', p.backoff.baseMs);
  positive('backoff.capMs', p.backoff.capMs);
  if (p.deadLetter.after === 'attempts') positive('deadLetter.max', p.deadLetter.max, 1);
  return problems;
}

/** After a failed attempt: dead, or due again after a wait. */
export type AfterFailure = { next: 'dead' } | { next: 'retry'; delayMs: number };

/**
 * The policy's answer for a row whose `attempts`-th attempt failed (`expired`: the row is past its age limit):
 * dead once the dead-letter rule says so, else retried after backoffDelay(attempts). The SQL of a queue that
 * settles failures in one statement (backoffInterval, deadOrRetry in claim.ts) says the same; tests/db/queue
 * holds the two together.
 */
export function afterFailure(
  p: Pick<QueuePolicy, 'backoff' | 'deadLetter'>,
  row: { attempts: number; expired?: boolean },
  random: number,
): AfterFailure {
  const d = p.deadLetter;
  if ((d.after === 'attempts' && row.attempts >= d.max) || (d.after === 'age' && row.expired)) return { next: 'dead' };
  return { next: 'retry', delayMs: backoffDelay(Math.max(1, row.attempts), p.backoff, random) };
}
