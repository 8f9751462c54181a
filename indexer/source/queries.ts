// Every statement the sources run besides the ledger's own (indexer/ledger/queries.ts), as Queries that db/sql
// runs: the confirmed-mode provisional receipts (migration 0051) and the webhook receiver's events, dead letters
// and hints (webhook-store.ts runs those).
import { claimStatement, leaseUntil } from '../../db/queue';
import type { Query } from '../../db/sql';
import { sessionGone, THIS_SESSION } from '../../db/session-holder';
import type { Receipt } from '../decode/receipt';
import type { ClaimedTransfer, DropReason } from './webhook-hint-plan';

/**
 * Keep what a confirmed block holds. Seen again (same or another confirmed slot): refresh it. A 'final' row never
 * changes; a 'reversed' one seen again in a confirmed block (its transaction landed on the surviving fork) is
 * provisional once more.
 */
export function upsertProvisionalReceipts(cluster: string, seen: Array<{ slot: number; receipt: Receipt }>): Query {
  return {
    text: `INSERT INTO provisional_receipts (cluster, signature, ix_index, inner_index, slot, mint, destination, destination_owner, amount)
           SELECT $1, u.signature, u.ix_index, u.inner_index, u.slot, u.mint, u.destination, u.destination_owner, u.amount
             FROM unnest($2::text[], $3::int[], $4::int[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::numeric[])
                  AS u(signature, ix_index, inner_index, slot, mint, destination, destination_owner, amount)
           ON CONFLICT (cluster, signature, ix_index, inner_index)
           DO UPDATE SET slot = EXCLUDED.slot, state = 'provisional', settled_at = NULL
            WHERE provisional_receipts.state <> 'final'`,
    values: [
      cluster,
      seen.map((r) => r.receipt.signature),
      seen.map((r) => r.receipt.ixIndex),
      seen.map((r) => r.receipt.innerIndex),
      seen.map((r) => String(r.slot)),
      seen.map((r) => r.receipt.mint),
      seen.map((r) => r.receipt.destination),
      seen.map((r) => r.receipt.destinationOwner),
      seen.map((r) => r.receipt.amount.toString()),
    ],
  };
}

/**
 * Settle every open row at or below `slot`: 'final' when the ledger's receipts hold the same identity, 'reversed'
 * when not. Returns one row per resulting state with its count.
 */
export function settleProvisionalReceipts(cluster: string, slot: number): Query {
  return {
    text: `WITH settled AS (
             UPDATE provisional_receipts p
                SET state = CASE WHEN EXISTS (
                              SELECT 1 FROM receipts r
                               WHERE r.cluster = p.cluster AND r.signature = p.signature
                                 AND r.ix_index = p.ix_index AND r.inner_index = p.inner_index)
                            THEN 'final'::provisional_state ELSE 'reversed'::provisional_state END,
                    settled_at = now()
              WHERE p.cluster = $1 AND p.state = 'provisional' AND p.slot <= $2
             RETURNING p.state)
           SELECT state::text, count(*)::int AS n FROM settled GROUP BY state`,
    values: [cluster, String(slot)],
  };
}

// ---- the webhook receiver: events, dead letters, hints (migrations 0050, 0130) ----

export interface DeadLetter {
  provider: string;
  eventId: string | null;
  itemIndex: number | null;
  reason: string;
  detail: string | null;
  rawBody: Buffer;
  /** 'chain': rawBody is the chain's getTransaction answer for `signature`, not the delivery. */
  origin?: 'delivery' | 'chain';
  signature?: string | null;
}

export interface EventRecord {
  provider: string;
  eventId: string;
  bodySha256: string;
  transactions: number;
  receipts: number;
  inserted: number;
  deadLettered: number;
}

export interface NewHint {
  signature: string;
  claimed: ClaimedTransfer[] | null;
}

export function findWebhookEvent(provider: string, eventId: string): Query {
  return {
    text: 'SELECT body_sha256 FROM webhook_events WHERE provider = $1 AND event_id = $2',
    values: [provider, eventId],
  };
}

/** Touches no row when another delivery of the same event was recorded first. */
export function insertWebhookEvent(e: EventRecord): Query {
  return {
    text: `INSERT INTO webhook_events (provider, event_id, body_sha256, transactions, receipts, inserted, dead_lettered)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT ON CONSTRAINT webhook_events_identity DO NOTHING`,
    values: [e.provider, e.eventId, e.bodySha256, e.transactions, e.receipts, e.inserted, e.deadLettered],
  };
}

/** One statement for all the bad items of a delivery: they are kept together or not at all. */
export function insertDeadLetters(rows: DeadLetter[]): Query {
  return {
    text: `INSERT INTO webhook_dead_letters (provider, event_id, item_index, reason, detail, raw_body, origin, signature)
           SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bytea[], $7::text[], $8::text[])`,
    values: [
      rows.map((r) => r.provider),
      rows.map((r) => r.eventId),
      rows.map((r) => r.itemIndex),
      rows.map((r) => r.reason),
      rows.map((r) => r.detail),
      rows.map((r) => r.rawBody),
      rows.map((r) => r.origin ?? 'delivery'),
      rows.map((r) => r.signature ?? null),
    ],
  };
}

/**
 * Hold each signature as a pending hint. A hint dropped only because the chain had not shown it (not_found,
 * rpc_error) is reopened; a pending, credited or refuted one is left as it is.
 */
export function holdHints(
  cluster: string,
  provider: string,
  eventId: string | null,
  hints: NewHint[],
  maxAgeMs: number,
): Query {
  return {
    text: `INSERT INTO webhook_hints (cluster, signature, provider, event_id, claimed, expires_at)
           SELECT $1, u.signature, $2, $3, u.claimed, now() + make_interval(secs => $6::double precision / 1000)
             FROM unnest($4::text[], $5::jsonb[]) AS u(signature, claimed)
           ON CONFLICT ON CONSTRAINT webhook_hints_identity DO UPDATE
              SET state = 'pending', settled_at = NULL, drop_reason = NULL, checks = 0, next_check_at = now(), lease_until = NULL,
                  expires_at = EXCLUDED.expires_at, provider = EXCLUDED.provider, event_id = EXCLUDED.event_id,
                  claimed = COALESCE(EXCLUDED.claimed, webhook_hints.claimed)
            WHERE webhook_hints.state = 'dropped' AND webhook_hints.drop_reason IN ('not_found', 'rpc_error')`,
    values: [
      cluster,
      provider,
      eventId,
      hints.map((h) => h.signature),
      hints.map((h) => (h.claimed === null ? null : JSON.stringify(h.claimed))),
      maxAgeMs,
    ],
  };
}

/** The id and state of each named signature's hint. */
export function hintStates(cluster: string, signatures: string[]): Query {
  return {
    text: 'SELECT id::text, signature, state::text FROM webhook_hints WHERE cluster = $1 AND signature = ANY($2::text[])',
    values: [cluster, signatures],
  };
}

/** The state of each of these hints (by id) that still exists (an expired unconfirmed one is deleted). */
export function hintStatesById(ids: string[]): Query {
  return {
    text: 'SELECT id::text, state::text FROM webhook_hints WHERE id = ANY($1::bigint[])',
    values: [ids],
  };
}

/**
 * SQL expression: a hint's bucket — its provider when that is one of the configured names ($known, a text[]),
 * else 'unknown': the caps and the fairness of the checks are per bucket, so names a sender makes up share one.
 */
function bucketOf(known: string): string {
  return `(CASE WHEN provider = ANY(${known}::text[]) THEN provider ELSE 'unknown' END)`;
}

/**
 * Before hints are held, in the same transaction: serialize the holds of one (cluster, bucket) (a transaction-level
 * advisory lock, so the cap is exact under concurrent deliveries) and count the bucket's pending hints (at most
 * `cap` + 1 rows are read) and how many of `signatures` would be new (not pending, credited or refuted already).
 */
export function hintCapacity(
  cluster: string,
  bucket: string,
  known: readonly string[],
  signatures: readonly string[],
  cap: number,
): Query {
  return {
    text: `SELECT pg_advisory_xact_lock(hashtextextended('oncepay:webhook-hints:' || current_schema() || ':' || $1 || ':' || $2, 0)) IS NULL AS locked,
                  (SELECT count(*)::int FROM (SELECT 1 FROM webhook_hints
                                               WHERE cluster = $1 AND state = 'pending' AND ${bucketOf('$3')} = $2
                                               LIMIT $5 + 1) p) AS pending,
                  (SELECT count(*)::int FROM unnest($4::text[]) AS u(signature)
                    WHERE NOT EXISTS (SELECT 1 FROM webhook_hints h
                                       WHERE h.cluster = $1 AND h.signature = u.signature
                                         AND NOT (h.state = 'dropped' AND h.drop_reason IN ('not_found', 'rpc_error')))) AS new`,
    values: [cluster, bucket, known, signatures, cap],
  };
}

/**
 * Lease pending hints for one check: the given ids, or else those due (ids null), at most `limit`. A hint is free
 * when no lease holds it, its lease has passed, or the session that leased it is gone (db/session-holder.ts: a
 * killed verifier's or a restarted server's hints are free at once). The lease names this session; run it on the
 * connection that will settle the hints. Due hints are taken round-robin across the provider buckets and, in a
 * bucket, least-checked first and newest-due first among equals (a fresh notification before an old unconfirmed
 * one); `rank` is that order. SKIP LOCKED lets several verifiers share the table.
 */
export function leaseHints(
  cluster: string,
  ids: string[] | null,
  limit: number,
  leaseMs: number,
  known: readonly string[],
): Query {
  const free = `(lease_until IS NULL OR lease_until < now() OR holder_pid IS NULL OR ${sessionGone('holder_pid', 'holder_started')})`;
  return {
    // The queue mechanism's claim (db/queue), held by a lease and by this session (holder_pid, holder_started).
    text: claimStatement({
      table: 'webhook_hints',
      alias: 'h',
      with: [
        `ranked AS (
           SELECT id, row_number() OVER (PARTITION BY ${bucketOf('$5')} ORDER BY checks, next_check_at DESC, id) AS rank
             FROM webhook_hints
            WHERE cluster = $1 AND state = 'pending' AND ${free}
              AND (CASE WHEN $2::bigint[] IS NULL THEN next_check_at <= now() ELSE id = ANY($2::bigint[]) END))`,
      ],
      // Free again under the row lock: another verifier may have leased the hint since `ranked` read it.
      due: {
        from: 'webhook_hints h JOIN (SELECT id, rank FROM ranked ORDER BY rank, id LIMIT $3) r ON r.id = h.id',
        where: `h.state = 'pending' AND ${free}`,
      },
      pick: ['r.rank'],
      set: [
        leaseUntil('lease_until', '$4'),
        'checks = h.checks + 1',
        'holder_pid = me.pid',
        'holder_started = me.backend_start',
      ],
      using: `, ${THIS_SESSION} me`,
      returning: `h.id::text, h.signature, h.provider, h.event_id, h.claimed, h.checks, (h.expires_at <= now()) AS expired,
                  picked.rank`,
    }),
    values: [cluster, ids, limit, leaseMs, known],
  };
}

export function settleHintCredited(id: string, slot: bigint | null, receipts: number, inserted: number): Query {
  return {
    text: `UPDATE webhook_hints SET state = 'credited', settled_at = now(), lease_until = NULL, holder_pid = NULL, holder_started = NULL,
                  last_error = NULL, slot = $2, receipts = $3, inserted = $4
            WHERE id = $1 AND state = 'pending'`,
    values: [id, slot === null ? null : slot.toString(), receipts, inserted],
  };
}

export function settleHintDropped(id: string, reason: DropReason, detail: string): Query {
  return {
    text: `UPDATE webhook_hints SET state = 'dropped', settled_at = now(), lease_until = NULL, holder_pid = NULL, holder_started = NULL,
                  drop_reason = $2, last_error = $3
            WHERE id = $1 AND state = 'pending'`,
    values: [id, reason, detail],
  };
}

/** Several hints not (yet) confirmed by the chain: each checked again after its own delay, with its last error. */
export function recheckHintsLater(ids: string[], delaysMs: number[], lastErrors: string[]): Query {
  return {
    text: `UPDATE webhook_hints h SET next_check_at = now() + make_interval(secs => u.delay / 1000), lease_until = NULL,
                  holder_pid = NULL, holder_started = NULL, last_error = u.last_error
             FROM unnest($1::bigint[], $2::double precision[], $3::text[]) AS u(id, delay, last_error)
            WHERE h.id = u.id AND h.state = 'pending'`,
    values: [ids, delaysMs, lastErrors],
  };
}

/**
 * Hints the chain never confirmed before they expired (not_found, rpc_error): deleted, not kept (a signature a sender
 * made up would otherwise stay forever); a later delivery of the signature holds it again. Returns the ids deleted.
 */
export function deleteExpiredHints(ids: string[]): Query {
  return {
    text: `DELETE FROM webhook_hints WHERE id = ANY($1::bigint[]) AND state = 'pending' AND expires_at <= now() RETURNING id::text`,
    values: [ids],
  };
}

/** Settled hints older than the retention: deleted, at most `limit` a statement (the verifier's housekeeping). */
export function pruneSettledHints(cluster: string, retentionMs: number, limit: number): Query {
  return {
    text: `DELETE FROM webhook_hints WHERE id IN (
             SELECT id FROM webhook_hints
              WHERE cluster = $1 AND state <> 'pending' AND settled_at < now() - make_interval(secs => $2::double precision / 1000)
              LIMIT $3)`,
    values: [cluster, retentionMs, limit],
  };
}

/** Leased hints given back unchecked: the check each counted did not happen. */
export function releaseHints(ids: string[]): Query {
  return {
    text: `UPDATE webhook_hints SET lease_until = NULL, holder_pid = NULL, holder_started = NULL, checks = greatest(checks - 1, 0)
            WHERE id = ANY($1::bigint[]) AND state = 'pending'`,
    values: [ids],
  };
}

export function countPendingHints(cluster: string): Query {
  return {
    text: `SELECT count(*)::int AS n FROM webhook_hints WHERE cluster = $1 AND state = 'pending'`,
    values: [cluster],
  };
}
