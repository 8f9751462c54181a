-- The webhook is a hint; the chain is the truth. In the default (verifying) mode a delivery credits nothing by
-- itself: each transaction signature it names is held here until `getTransaction` at the configured commitment
-- answers for it. Credited: the chain's own transaction was decoded and applied through the ledger. Dropped: the
-- chain refuted it (failed_on_chain, malformed) or never confirmed it within the bounded time (not_found,
-- rpc_error). One row per (cluster, signature), however many deliveries name it.
CREATE TYPE webhook_hint_state AS ENUM ('pending', 'credited', 'dropped');

CREATE TABLE webhook_hints (
  id             bigserial PRIMARY KEY,
  cluster        text NOT NULL,
  signature      text NOT NULL,
  provider       text NOT NULL,
  event_id       text,
  -- What the delivery's own transaction claimed (decoded receipts), kept only to count a disagreement with the
  -- chain; never credited. NULL when the delivery named the signature only, or its transaction was refused.
  claimed        jsonb,
  state          webhook_hint_state NOT NULL DEFAULT 'pending',
  checks         integer NOT NULL DEFAULT 0 CHECK (checks >= 0),
  next_check_at  timestamptz NOT NULL DEFAULT now(),
  -- A verifier holding the hint until then; another may take it after (a crashed holder loses nothing).
  lease_until    timestamptz,
  received_at    timestamptz NOT NULL DEFAULT now(),
  -- Not confirmed by then → dropped with the last reason seen.
  expires_at     timestamptz NOT NULL,
  settled_at     timestamptz,
  drop_reason    text,
  last_error     text,
  slot           bigint CHECK (slot >= 0),
  receipts       integer CHECK (receipts >= 0),
  inserted       integer CHECK (inserted >= 0),
  CONSTRAINT webhook_hints_identity UNIQUE (cluster, signature),
  CHECK ((state = 'pending') = (settled_at IS NULL)),
  CHECK ((state = 'dropped') = (drop_reason IS NOT NULL))
);
CREATE INDEX webhook_hints_due_idx ON webhook_hints (next_check_at) WHERE state = 'pending';

-- A dead letter now says where the refused bytes came from: the delivery itself, or the chain's answer for a
-- signature the delivery named (then raw_body is that getTransaction result and signature names it).
ALTER TABLE webhook_dead_letters
  ADD COLUMN origin text NOT NULL DEFAULT 'delivery' CHECK (origin IN ('delivery', 'chain')),
  ADD COLUMN signature text;
