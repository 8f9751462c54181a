-- Provider webhook deliveries. Exactly-once for receipts lives in the ledger's receipts_identity; this table
-- only lets a redelivered event (same provider event id) be answered 2xx without applying it again.
CREATE TABLE webhook_events (
  id            bigserial PRIMARY KEY,
  provider      text NOT NULL,
  event_id      text NOT NULL,
  body_sha256   text NOT NULL,
  transactions  integer NOT NULL CHECK (transactions >= 0),
  receipts      integer NOT NULL CHECK (receipts >= 0),
  inserted      integer NOT NULL CHECK (inserted >= 0),
  dead_lettered integer NOT NULL CHECK (dead_lettered >= 0),
  received_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_events_identity UNIQUE (provider, event_id)
);

-- Authenticated deliveries (or items of one) that could not be applied. Kept, never dropped: an operator can
-- read the raw body, fix the cause and replay it (e.g. with `oncepay ingest`).
CREATE TABLE webhook_dead_letters (
  id          bigserial PRIMARY KEY,
  provider    text NOT NULL,
  event_id    text,
  -- Position of the bad item in the delivery; NULL when the whole body was refused.
  item_index  integer CHECK (item_index >= 0),
  reason      text NOT NULL,         -- an ONCEPAY__WEBHOOK__* code
  detail      text,                  -- the underlying code and message (decoder / ledger)
  raw_body    bytea NOT NULL,        -- the whole delivery, byte for byte
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_dead_letters_received_at_idx ON webhook_dead_letters (received_at);
