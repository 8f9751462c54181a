-- `indexer run --commitment confirmed`: transfers seen in confirmed (not yet finalized) blocks. Never credited:
-- the ledger credits only what the finalized scan applies. Once the finalized checkpoint passes a row's slot it
-- settles by identity: 'final' if the ledger holds the same receipt, 'reversed' if its block vanished.
-- 'final' never changes; 'reversed' goes back to 'provisional' only if the transfer is seen again in a confirmed block.
CREATE TYPE provisional_state AS ENUM ('provisional', 'final', 'reversed');

CREATE TABLE provisional_receipts (
  cluster           text NOT NULL,
  signature         text NOT NULL,
  ix_index          integer NOT NULL CHECK (ix_index >= 0),
  inner_index       integer NOT NULL CHECK (inner_index >= -1),
  slot              bigint NOT NULL CHECK (slot >= 0),
  mint              text,
  destination       text NOT NULL,
  destination_owner text,
  amount            u64 NOT NULL,
  state             provisional_state NOT NULL DEFAULT 'provisional',
  seen_at           timestamptz NOT NULL DEFAULT now(),
  settled_at        timestamptz,
  PRIMARY KEY (cluster, signature, ix_index, inner_index),
  CHECK ((state = 'provisional') = (settled_at IS NULL))
);
CREATE INDEX provisional_receipts_open_idx ON provisional_receipts (cluster, slot) WHERE state = 'provisional';
