-- How a ledger exception was settled, at most once: refunded through a payout row (so through the op PDA, with
-- its on-chain proof on that row), or resolved by an operator without moving money. An exception without a row
-- here is open. The payout's own payout_id is derived from the exception's receipt key
-- (refund:<cluster>:<signature>:<ix_index>:<inner_index>), so UNIQUE (merchant_id, payout_id) and the op PDA
-- make a second refund of the same receipt impossible even without this table.
CREATE TYPE exception_resolution AS ENUM ('refund', 'resolved');

CREATE TABLE exception_resolutions (
  exception_id bigint PRIMARY KEY REFERENCES exceptions (id),
  resolution   exception_resolution NOT NULL,
  payout_id    bigint UNIQUE REFERENCES payouts (id),   -- the refund payout (its proof: result_signature, result_slot, op_pda)
  note         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CHECK ((resolution = 'refund') = (payout_id IS NOT NULL)),
  CHECK (resolution = 'refund' OR length(note) > 0)
);
