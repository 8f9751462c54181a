// SQL for webhook events and dead letters, as named functions over a pg Pool.
import type { Pool } from 'pg';

export interface DeadLetter {
  provider: string;
  eventId: string | null;
  itemIndex: number | null;
  reason: string;
  detail: string | null;
  rawBody: Buffer;
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

export function createWebhookStore(db: Pool) {
  return {
    /** The recorded body hash of this event, or null if the event is new. */
    async findEvent(provider: string, eventId: string): Promise<string | null> {
      const { rows } = await db.query<{ body_sha256: string }>('SELECT body_sha256 FROM webhook_events WHERE provider = $1 AND event_id = $2', [provider, eventId]);
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
        `INSERT INTO webhook_dead_letters (provider, event_id, item_index, reason, detail, raw_body)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bytea[])`,
        [
          rows.map((r) => r.provider),
          rows.map((r) => r.eventId),
          rows.map((r) => r.itemIndex),
          rows.map((r) => r.reason),
          rows.map((r) => r.detail),
          rows.map((r) => r.rawBody),
        ],
      );
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
