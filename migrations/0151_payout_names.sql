-- Names that say one thing: payouts.payout_id was the merchant's own text id while payout_attempts.payout_id (and
-- exception_resolutions.payout_id) are foreign keys to payouts.id. The merchant's id is now merchant_payout_id
-- (the API still calls it payoutId: from the merchant's side it is their payout id); the foreign keys keep their
-- names. Data, constraints and indexes are unchanged.
ALTER TABLE payouts RENAME COLUMN payout_id TO merchant_payout_id;
ALTER TABLE payouts RENAME CONSTRAINT payouts_merchant_id_payout_id_key TO payouts_merchant_id_merchant_payout_id_key;
