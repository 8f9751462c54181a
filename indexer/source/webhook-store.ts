// Webhook events, dead letters and hints (signatures held until the chain confirms them): indexer/source/queries.ts's
// statements run through db/sql, over the pool or a client inside a transaction.
import { Db, exec, one, rows } from '../../db/sql';
import * as q from './queries';
import type { DeadLetter, EventRecord, NewHint } from './queries';
import type { ClaimedTransfer, DropReason } from './webhook-hint-plan';

export type { DeadLetter, EventRecord, NewHint };

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
      return (await one<{ body_sha256: string }>(db, q.findWebhookEvent(provider, eventId)))?.body_sha256 ?? null;
    },
    /** True if this call recorded the event; false if another delivery of it got there first. */
    async recordEvent(e: EventRecord): Promise<boolean> {
      return (await exec(db, q.insertWebhookEvent(e))) > 0;
    },
    async deadLetter(letters: DeadLetter[]): Promise<void> {
      if (letters.length === 0) return;
      await exec(db, q.insertDeadLetters(letters));
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
      await exec(db, q.holdHints(cluster, provider, eventId, hints, maxAgeMs));
      return rows<{ id: string; signature: string; state: HintState }>(
        db,
        q.hintStates(
          cluster,
          hints.map((h) => h.signature),
        ),
      );
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
      const leased = await rows<LeasedHintRow>(db, q.leaseHints(cluster, opts.ids ?? null, opts.limit, opts.leaseMs));
      return leased.map((r) => ({
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
      await exec(db, q.settleHintCredited(id, r.slot, r.receipts, r.inserted));
    },
    async settleDropped(id: string, reason: DropReason, detail: string): Promise<void> {
      await exec(db, q.settleHintDropped(id, reason, detail));
    },
    async recheckLater(id: string, delayMs: number, lastError: string): Promise<void> {
      await exec(db, q.recheckHintLater(id, delayMs, lastError));
    },
    /** Give a leased hint back unchecked (the check was interrupted). */
    async release(id: string): Promise<void> {
      await exec(db, q.releaseHint(id));
    },
    async countPending(cluster: string): Promise<number> {
      return (await one<{ n: number }>(db, q.countPendingHints(cluster)))!.n;
    },
  };
}

/** A row of the lease statement. */
interface LeasedHintRow {
  id: string;
  signature: string;
  provider: string;
  event_id: string | null;
  claimed: ClaimedTransfer[] | null;
  checks: number;
  expired: boolean;
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
