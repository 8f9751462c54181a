-- The payout worker pool (`oncepay payout worker`, app/payout/worker.ts). A worker claims a due payout with one
-- FOR UPDATE SKIP LOCKED statement that also takes the payout's session advisory lock on the connection that
-- executes it; the payout is held exactly as long as that lock, which PostgreSQL drops with the connection (even
-- after SIGKILL), so there is no lease to expire. What needs to survive is when to try again.

ALTER TABLE payouts
  -- When a worker may claim it next: now for a new payout, later after trouble (capped, jittered backoff).
  ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- Claims handed back after trouble: the exponent of the next backoff.
  ADD COLUMN retries integer NOT NULL DEFAULT 0 CHECK (retries >= 0),
  -- Bookkeeping for operators: how often and by which worker (host:pid) it was claimed, and when last.
  ADD COLUMN claims integer NOT NULL DEFAULT 0 CHECK (claims >= 0),
  ADD COLUMN claimed_by text,
  ADD COLUMN claimed_at timestamptz;

CREATE INDEX payouts_due ON payouts (next_attempt_at, id) WHERE state IN ('pending', 'executing');

-- Attempts whose outcome is not known yet (the uncertain-attempts gauges read these).
CREATE INDEX payout_attempts_open ON payout_attempts (created_at) WHERE status IN ('built', 'sent');
