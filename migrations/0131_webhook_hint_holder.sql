-- A leased webhook hint belongs to the database session that leased it (the verifier's own connection,
-- indexer/source/webhook-verifier.ts), as an in-flight Idempotency-Key does (0110, db/session-holder.ts): when
-- PostgreSQL no longer shows that session — the process was killed, its connection terminated, the server
-- restarted — the hint is free at once, instead of when lease_until passes. lease_until stays as the bound for a
-- live holder that lost track of a hint.
ALTER TABLE webhook_hints
  ADD COLUMN holder_pid     integer,
  ADD COLUMN holder_started timestamptz;

-- The per-provider cap on pending hints (a delivery past it is refused 429) counts these.
CREATE INDEX webhook_hints_pending_by_provider ON webhook_hints (cluster, provider) WHERE state = 'pending';
-- Settled hints are deleted once older than the retention (the verifier's housekeeping) through this.
CREATE INDEX webhook_hints_settled_at_idx ON webhook_hints (settled_at) WHERE state <> 'pending';
