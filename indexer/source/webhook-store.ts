// SQL for webhook events, dead letters and hints (signatures held until the chain confirms them), as named
// functions over a pg Pool or a client inside a transaction.
import type { Pool, PoolClient } from 'pg';
import type { ClaimedTransfer, DropReason } from './webhook-hint-plan';

type Db = Pool | PoolClient;

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

export interface ClaimedHint {
  id: string;
  signature: string;
  provider: string;
  eventId: string | null;
  claimed: ClaimedTransfer[] | null;
  checks: number;
  expired: boolean;
}

export type HintState = 'pending' | 'credited' | 'dropped';

export function createWebhookStore(db: Db) {
  return {
    /** The recorded body hash of this event, or null if the event is new. */
    async findEvent(provider: string, eventId: string): Promise<string | null> {
      const { rows } = await db.query<{ body_sha256: string }>(
        'SELECT body_sha256 FROM webhook_events WHERE provider = $1 AND event_id = $2',
        [provider, eventId],
      );
      return rows[0]?.body_sha256 ?? null;
    },
    /** True if this call recorded the event; false if another delivery of it got there first. */
    async recordEvent(e: EventRecord): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO webhook_events (provider, event_id, body_sha256, transactions, receipts, inserted, dead_lettered)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT ON CONSTRAINT webhook_events_identity DO NOTHING`,
        [e.provider, e.eventId, e.bodySha256, e.transactions, e.receipts, e.inserted, e.deadLettered],
      );
      return (rowCount ?? 0) > 0;
    },
    async deadLetter(rows: DeadLetter[]): Promise<void> {
      if (rows.length === 0) return;
      // One statement for all the bad items of a delivery: they are kept together or not at all.
      await db.query(
        `INSERT INTO webhook_dead_letters (provider, event_id, item_index, reason, detail, raw_body, origin, signature)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bytea[], $7::text[], $8::text[])`,
        [
          rows.map((r) => r.provider),
          rows.map((r) => r.eventId),
          rows.map((r) => r.itemIndex),
          rows.map((r) => r.reason),
          rows.map((r) => r.detail),
          rows.map((r) => r.rawBody),
          rows.map((r) => r.origin ?? 'delivery'),
          rows.map((r) => r.signature ?? null),
        ],
      );
    },

    /**
     * Hold each signature as a pending hint; returns the id and state of every named signature's hint. A hint
     * dropped only because the chain had not shown it (not_found, rpc_error) is reopened by a new delivery; a
     * pending, credited or refuted one is left as it is.
     */
    async holdHints(
      cluster: string,
      provider: string,
      eventId: string | null,
      hints: NewHint[],
      maxAgeMs: number,
    ): Promise<Array<{ id: string; signature: string; state: HintState }>> {
      if (hints.length === 0) return [];
      await db.query(
        `INSERT INTO webhook_hints (cluster, signature, provider, event_id, claimed, expires_at)
         SELECT $1, u.signature, $2, $3, u.claimed, now() + make_interval(secs => $6::double precision / 1000)
           FROM unnest($4::text[], $5::jsonb[]) AS u(signature, claimed)
         ON CONFLICT ON CONSTRAINT webhook_hints_identity DO UPDATE
            SET state = 'pending', settled_at = NULL, drop_reason = NULL, checks = 0, next_check_at = now(), lease_until = NULL,
                expires_at = EXCLUDED.expires_at, provider = EXCLUDED.provider, event_id = EXCLUDED.event_id,
                claimed = COALESCE(EXCLUDED.claimed, webhook_hints.claimed)
          WHERE webhook_hints.state = 'dropped' AND webhook_hints.drop_reason IN ('not_found', 'rpc_error')`,
        [
          cluster,
          provider,
          eventId,
          hints.map((h) => h.signature),
          hints.map((h) => (h.claimed === null ? null : JSON.stringify(h.claimed))),
          maxAgeMs,
        ],
      );
      const { rows } = await db.query<{ id: string; signature: string; state: HintState }>(
        'SELECT id::text, signature, state::text FROM webhook_hints WHERE cluster = $1 AND signature = ANY($2::text[])',
        [cluster, hints.map((h) => h.signature)],
      );
      return rows;
    },

    /**
     * Lease pending hints for one check: the given ids (a delivery checking its own hints at once), or else those
     * due. SKIP LOCKED + the lease let several verifiers (processes) share the table; a holder that dies only
     * delays its hints until the lease ends.
     */
    async leaseHints(
      cluster: string,
      opts: { ids?: string[]; limit: number; leaseMs: number },
    ): Promise<ClaimedHint[]> {
      const { rows } = await db.query(
        `WITH due AS (
           SELECT id FROM webhook_hints
            WHERE cluster = $1 AND state = 'pending' AND (lease_until IS NULL OR lease_until < now())
              AND (CASE WHEN $2::bigint[] IS NULL THEN next_check_at <= now() ELSE id = ANY($2::bigint[]) END)
            ORDER BY next_check_at
            LIMIT $3
            FOR UPDATE SKIP LOCKED)
         UPDATE webhook_hints h
            SET lease_until = now() + make_interval(secs => $4::double precision / 1000), checks = h.checks + 1
           FROM due WHERE h.id = due.id
         RETURNING h.id::text, h.signature, h.provider, h.event_id, h.claimed, h.checks, (h.expires_at <= now()) AS expired`,
        [cluster, opts.ids ?? null, opts.limit, opts.leaseMs],
      );
      return rows.map((r) => ({
        id: r.id,
        signature: r.signature,
        provider: r.provider,
        eventId: r.event_id,
        claimed: r.claimed,
        checks: r.checks,
        expired: r.expired,
      }));
    },
    async settleCredited(id: string, r: { slot: bigint | null; receipts: number; inserted: number }): Promise<void> {
      await db.query(
        `UPDATE webhook_hints SET state = 'credited', settled_at = now(), lease_until = NULL, last_error = NULL, slot = $2, receipts = $3, inserted = $4
          WHERE id = $1 AND state = 'pending'`,
        [id, r.slot === null ? null : r.slot.toString(), r.receipts, r.inserted],
      );
    },
    async settleDropped(id: string, reason: DropReason, detail: string): Promise<void> {
      await db.query(
        `UPDATE webhook_hints SET state = 'dropped', settled_at = now(), lease_until = NULL, drop_reason = $2, last_error = $3
          WHERE id = $1 AND state = 'pending'`,
        [id, reason, detail],
      );
    },
    async recheckLater(id: string, delayMs: number, lastError: string): Promise<void> {
      await db.query(
        `UPDATE webhook_hints SET next_check_at = now() + make_interval(secs => $2::double precision / 1000), lease_until = NULL, last_error = $3
          WHERE id = $1 AND state = 'pending'`,
        [id, delayMs, lastError],
      );
    },
    /** Give a leased hint back unchecked (the check was interrupted). */
    async release(id: string): Promise<void> {
      await db.query(
        `UPDATE webhook_hints SET lease_until = NULL, checks = greatest(checks - 1, 0) WHERE id = $1 AND state = 'pending'`,
        [id],
      );
    },
    async countPending(cluster: string): Promise<number> {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_hints WHERE cluster = $1 AND state = 'pending'`,
        [cluster],
      );
      return rows[0].n;
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
