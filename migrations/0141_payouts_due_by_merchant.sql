-- The payout workers' claim names the merchants a worker's keys sign for (app/payout/signers.ts): due payouts by
-- merchant, so a worker serving a few merchants among many does not walk every other merchant's due rows.
CREATE INDEX payouts_due_by_merchant ON payouts (merchant_id, next_attempt_at, id) WHERE state IN ('pending', 'executing');
