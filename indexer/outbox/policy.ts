// The outbox worker's options checked and turned into its settings (pure): the outbox as a configuration of the one
// queue mechanism (db/queue) — held by a lease, retried with backoff, dead-lettered after maxAttempts (kept for
// `oncepay outbox replay`) — and the pause between empty rounds.
import { OncepayError } from '../../common/errors';
import { OUTBOX_CODES } from '../../common/errors/codes';
import type { QueuePolicy } from '../../db/queue';

export interface OutboxPolicyOptions {
  batchSize?: number;
  leaseSeconds?: number;
  maxAttempts?: number;
  backoffBaseSeconds?: number;
  backoffCapSeconds?: number;
  pollMs?: number;
}

export interface OutboxSettings {
  policy: QueuePolicy;
  pollMs: number;
}

/** Throws OUTBOX_CODES.INVALID_OPTION for a negative or non-finite option, or a batch size / attempts below 1. */
export function outboxSettings(o: OutboxPolicyOptions): OutboxSettings {
  const batchSize = o.batchSize ?? 10;
  const leaseSeconds = o.leaseSeconds ?? 60;
  const maxAttempts = o.maxAttempts ?? 10;
  const base = o.backoffBaseSeconds ?? 1;
  const cap = o.backoffCapSeconds ?? 3600;
  const pollMs = o.pollMs ?? 1000;
  for (const [name, v] of Object.entries({ batchSize, leaseSeconds, maxAttempts, base, cap, pollMs })) {
    if (
      !(typeof v === 'number' && Number.isFinite(v) && v >= 0) ||
      ((name === 'batchSize' || name === 'maxAttempts') && v < 1)
    ) {
      throw new OncepayError(OUTBOX_CODES.INVALID_OPTION, `${name} must be a positive number, got ${v}`);
    }
  }
  return {
    policy: {
      queue: 'outbox',
      batch: batchSize,
      hold: { leaseMs: leaseSeconds * 1000, session: false },
      backoff: { baseMs: base * 1000, capMs: cap * 1000 },
      deadLetter: { after: 'attempts', max: maxAttempts },
    },
    pollMs,
  };
}
