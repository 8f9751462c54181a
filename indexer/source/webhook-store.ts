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
  /** Its place in the lease's order (round-robin across provider buckets, least-checked first): 1 = first. */
  rank: number;
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
     * Before holding a delivery's hints, in its transaction: the bucket's pending count and how many of these
     * signatures would be new (queries.ts hintCapacity; holds of one bucket wait for each other from here on).
     */
    async hintCapacity(
      cluster: string,
      bucket: string,
      known: readonly string[],
      signatures: readonly string[],
      cap: number,
    ): Promise<{ pending: number; fresh: number }> {
      const r = (await one<{ pending: number; new: number }>(
        db,
        q.hintCapacity(cluster, bucket, known, signatures, cap),
      ))!;
      return { pending: r.pending, fresh: r.new };
    },

    /**
     * Lease pending hints for one check, for this connection's session: the given ids (a delivery checking its own
     * hints at once), or else those due, in the order of queries.ts leaseHints. SKIP LOCKED + the lease let several
     * verifiers (processes) share the table; a holder whose session ends (killed, disconnected, the server
     * restarted) frees its hints at once.
     */
    async leaseHints(
      cluster: string,
      opts: { ids?: string[]; limit: number; leaseMs: number; known: readonly string[] },
    ): Promise<ClaimedHint[]> {
      const leased = await rows<LeasedHintRow>(
        db,
        q.leaseHints(cluster, opts.ids ?? null, opts.limit, opts.leaseMs, opts.known),
      );
      return leased
        .map((r) => ({
          id: r.id,
          signature: r.signature,
          provider: r.provider,
          eventId: r.event_id,
          claimed: r.claimed,
          checks: r.checks,
          expired: r.expired,
          rank: Number(r.rank),
        }))
        .sort((a, b) => a.rank - b.rank);
    },
    async settleCredited(id: string, r: { slot: bigint | null; receipts: number; inserted: number }): Promise<void> {
      await exec(db, q.settleHintCredited(id, r.slot, r.receipts, r.inserted));
    },
    async settleDropped(id: string, reason: DropReason, detail: string): Promise<void> {
      await exec(db, q.settleHintDropped(id, reason, detail));
    },
    /** Several hints to check again, each after its own delay (one statement). */
    async recheckLater(later: ReadonlyArray<{ id: string; delayMs: number; lastError: string }>): Promise<void> {
      if (later.length === 0) return;
      await exec(
        db,
        q.recheckHintsLater(
          later.map((x) => x.id),
          later.map((x) => x.delayMs),
          later.map((x) => x.lastError),
        ),
      );
    },
    /** Delete hints that expired unconfirmed; returns how many were deleted. */
    async deleteExpired(ids: string[]): Promise<number> {
      if (ids.length === 0) return 0;
      return (await rows(db, q.deleteExpiredHints(ids))).length;
    },
    /** Delete settled hints older than `retentionMs` (at most `limit`); returns how many. */
    async pruneSettled(cluster: string, retentionMs: number, limit: number): Promise<number> {
      return exec(db, q.pruneSettledHints(cluster, retentionMs, limit));
    },
    /** Give leased hints back unchecked (the check was interrupted). */
    async release(ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      await exec(db, q.releaseHints(ids));
    },
    /** The state of each of these hints; a hint missing from the map was deleted (expired unconfirmed). */
    async statesById(ids: string[]): Promise<Map<string, HintState>> {
      if (ids.length === 0) return new Map();
      const found = await rows<{ id: string; state: HintState }>(db, q.hintStatesById(ids));
      return new Map(found.map((r) => [r.id, r.state]));
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
  rank: string;
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
