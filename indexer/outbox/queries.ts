// Every statement the outbox worker runs, as named functions returning a Query (db/sql runs them).
import { backoffInterval, claimStatement, deadOrRetry, leaseUntil, type QueuePolicy } from '../../db/queue';
import type { Query } from '../../db/sql';

/**
 * Claim up to `limit` due rows in one statement: pending rows whose time has come, and delivering rows whose
 * lease ran out (their worker died). SKIP LOCKED lets several workers claim side by side without waiting on or
 * double-claiming a row; the attempt count goes up at claim time, so a worker that dies mid-delivery still
 * consumes an attempt and a poison row ends up dead.
 */
export function claimDue(policy: Pick<QueuePolicy, 'batch' | 'hold'>): Query {
  return {
    // The queue mechanism's claim (db/queue), held by a lease (locked_until).
    text: claimStatement({
      table: 'outbox',
      alias: 'o',
      due: {
        where: `(o.state = 'pending' AND o.next_attempt_at <= now()) OR (o.state = 'delivering' AND o.locked_until <= now())`,
        orderBy: 'o.next_attempt_at, o.id',
        limit: '$1',
      },
      pick: ['o.merchant'],
      set: [
        `state = 'delivering'`,
        'attempts = o.attempts + 1',
        leaseUntil('locked_until', '$2'),
        'updated_at = now()',
      ],
      using: ' LEFT JOIN webhook_endpoints e ON e.merchant = picked.merchant',
      returning: `o.id, o.fulfilment_id, o.idempotency_key, o.merchant, o.topic, o.payload, o.attempts,
                  e.url AS endpoint_url, e.secret AS endpoint_secret`,
    }),
    values: [policy.batch, policy.hold.leaseMs ?? 0],
  };
}

/** Guarded by state: if the row was reclaimed and delivered by another worker meanwhile, this is a no-op. */
export function markDelivered(id: string, status: number): Query {
  return {
    text: `UPDATE outbox SET state = 'delivered', delivered_at = now(), locked_until = NULL, last_status = $2,
                  last_error = NULL, updated_at = now()
            WHERE id = $1 AND state = 'delivering'`,
    values: [id, status],
  };
}

/**
 * A failed attempt: back to pending after a capped exponential backoff with jitter (half fixed, half random,
 * as pg-boss does: db/queue's backoffInterval), or dead after maxAttempts (its deadOrRetry). Guarded by the attempt number so a worker whose lease was taken
 * over cannot overwrite the newer attempt's state.
 */
export function markFailed(
  id: string,
  attempt: number,
  policy: Pick<QueuePolicy, 'backoff' | 'deadLetter'>,
  error: string,
  status: number | null,
): Query {
  const maxAttempts = policy.deadLetter.after === 'attempts' ? policy.deadLetter.max : null;
  return {
    text: `UPDATE outbox
              SET state = ${deadOrRetry('attempts', '$3', `'dead'::outbox_state`, `'pending'::outbox_state`)},
                  next_attempt_at = now() + ${backoffInterval('attempts', '$4', '$5')},
                  locked_until = NULL, last_error = $6, last_status = $7, updated_at = now()
            WHERE id = $1 AND state = 'delivering' AND attempts = $2
           RETURNING state`,
    values: [id, attempt, maxAttempts, policy.backoff.baseMs, policy.backoff.capMs, error, status],
  };
}

/** Re-queue one dead letter (by outbox id or fulfilment id) with a fresh attempt budget. */
export function replayDead(idOrFulfilment: string): Query {
  return {
    text: `UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL, updated_at = now()
            WHERE state = 'dead' AND (id::text = $1 OR fulfilment_id = $1)
           RETURNING id, fulfilment_id`,
    values: [idOrFulfilment],
  };
}

export function replayAllDead(): Query {
  return {
    text: `UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL, updated_at = now()
            WHERE state = 'dead'
           RETURNING id, fulfilment_id`,
    values: [],
  };
}

/**
 * Depth and age of what is still to deliver (pending or delivering), for the metrics and the drain loop, and how
 * many rows are dead (waiting for `outbox replay`). Each part reads its own partial index.
 */
export function outboxStats(): Query {
  return {
    text: `SELECT count(*)::int AS depth,
                  COALESCE(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_age_seconds,
                  (SELECT count(*)::int FROM outbox WHERE state = 'dead') AS dead
             FROM outbox WHERE state IN ('pending', 'delivering')`,
    values: [],
  };
}

/** Where a merchant's fulfilment webhooks go, and the secret that signs them (set again: replaced). */
export function upsertWebhookEndpoint(merchant: string, url: string, secret: string): Query {
  return {
    text: `INSERT INTO webhook_endpoints (merchant, url, secret) VALUES ($1, $2, $3)
           ON CONFLICT (merchant) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret`,
    values: [merchant, url, secret],
  };
}
