-- The indexer's ledger: invoices, the receipts credited to them, exceptions, checkpoints, and the
-- fulfilment outbox. Exactly-once lives in the UNIQUE constraints below; everything else is bookkeeping.
-- Amounts are u64 base units: NUMERIC(20,0) with a range CHECK, never a float.

CREATE DOMAIN u64 AS NUMERIC(20, 0)
  CHECK (VALUE >= 0 AND VALUE <= 18446744073709551615);

-- Who gets the fulfilment webhooks. A merchant row is optional: `oncepay outbox run --url` overrides it.
CREATE TABLE merchants (
  id             text PRIMARY KEY,
  webhook_url    text,
  webhook_secret text,
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- Order matters: the ledger only ever moves an invoice forward (status < 'paid').
CREATE TYPE invoice_status AS ENUM ('open', 'paid');

CREATE TABLE invoices (
  id              text PRIMARY KEY,                     -- the merchant's own invoice id
  merchant        text NOT NULL DEFAULT 'default',
  mint            text NOT NULL,                        -- mint address, or 'SOL' for native transfers
  expected_amount u64 NOT NULL CHECK (expected_amount > 0),
  -- A token account or owner wallet. Invoices without a reference key are matched by this address alone.
  deposit_address text,
  -- Solana Pay reference; invoices that have one are matched by it (and by deposit_address when both are set).
  reference_key   text UNIQUE,
  status          invoice_status NOT NULL DEFAULT 'open',
  -- Never above expected_amount: the excess of a payment is an 'overpayment' exception instead.
  credited_amount u64 NOT NULL DEFAULT 0 CHECK (credited_amount <= expected_amount),
  created_at      timestamptz NOT NULL DEFAULT now(),
  paid_at         timestamptz,
  CHECK (deposit_address IS NOT NULL OR reference_key IS NOT NULL),
  CHECK ((status = 'paid') = (paid_at IS NOT NULL))
);
CREATE INDEX invoices_deposit_address_idx ON invoices (deposit_address) WHERE deposit_address IS NOT NULL;

-- Which delivery path first brought a receipt in; later deliveries are counted in receipt_delivery_counts.
CREATE TYPE receipt_source AS ENUM ('scanner', 'backfill', 'webhook', 'file');

CREATE TABLE receipts (
  id                 bigserial PRIMARY KEY,
  cluster            text NOT NULL,
  signature          text NOT NULL,
  ix_index           integer NOT NULL CHECK (ix_index >= 0),
  -- -1 for a top-level instruction: never NULL, since NULLs are distinct inside a UNIQUE.
  inner_index        integer NOT NULL CHECK (inner_index >= -1),
  slot               bigint,
  block_time         bigint,
  program            text NOT NULL,
  kind               text NOT NULL,
  mint               text,
  source             text NOT NULL,
  destination        text NOT NULL,
  destination_owner  text,
  amount             u64 NOT NULL,
  invoice_id         text REFERENCES invoices (id),
  first_source       receipt_source NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT receipts_identity UNIQUE (cluster, signature, ix_index, inner_index)
);
CREATE INDEX receipts_invoice_id_idx ON receipts (invoice_id) WHERE invoice_id IS NOT NULL;

-- Durable delivery counters: one row per (cluster, source), bumped in the same transaction as the inserts,
-- so a spike in duplicates (stuck checkpoint, replaying provider) survives restarts and is visible.
CREATE TABLE receipt_delivery_counts (
  cluster    text NOT NULL,
  source     receipt_source NOT NULL,
  delivered  bigint NOT NULL DEFAULT 0,
  inserted   bigint NOT NULL DEFAULT 0,
  duplicates bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, source),
  CHECK (delivered = inserted + duplicates)
);

-- Real money that did not (fully) credit an invoice. Never dropped: each row keeps the receipt and the amount.
--   overpayment       the part of a payment beyond what the invoice still expected (invoice becomes paid)
--   late_payment      a payment to an invoice that was already paid (whole amount)
--   unknown_reference a payment to a watched address whose reference / address matches no invoice
--   mint_mismatch     a payment matched to an invoice but in another mint (whole amount, nothing credited)
--   unknown_mint      a payment matched to an invoice whose mint the decoder could not name (whole amount)
-- Underpayment is not an exception: partial payments accumulate and the invoice stays 'open'.
CREATE TYPE exception_kind AS ENUM ('overpayment', 'late_payment', 'unknown_reference', 'mint_mismatch', 'unknown_mint');

CREATE TABLE exceptions (
  id         bigserial PRIMARY KEY,
  kind       exception_kind NOT NULL,
  receipt_id bigint NOT NULL REFERENCES receipts (id),
  invoice_id text REFERENCES invoices (id),
  amount     u64 NOT NULL,
  detail     text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- A receipt raises at most one exception of each kind, even if the ledger code were run twice on it.
  UNIQUE (receipt_id, kind)
);

-- How far each delivery path has read, per cluster. Only moves forward (GREATEST on write).
CREATE TABLE checkpoints (
  cluster    text NOT NULL,
  source     receipt_source NOT NULL,
  slot       bigint NOT NULL CHECK (slot >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, source)
);

-- One fulfilment operation per paid invoice. The id is derived from the invoice id (never random), so a
-- redelivered payment or a re-run can never mint a second operation, and the receiver dedups on it.
CREATE TABLE fulfilments (
  id         text PRIMARY KEY,
  invoice_id text NOT NULL UNIQUE REFERENCES invoices (id),
  merchant   text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Order matters: pending < delivering < delivered; 'dead' is the dead letter (replay puts it back to pending).
CREATE TYPE outbox_state AS ENUM ('pending', 'delivering', 'delivered', 'dead');

CREATE TABLE outbox (
  id              bigserial PRIMARY KEY,
  fulfilment_id   text NOT NULL UNIQUE REFERENCES fulfilments (id),
  -- Sent as the Idempotency-Key header: the fulfilment operation id, the same on every attempt.
  idempotency_key text NOT NULL,
  merchant        text NOT NULL,
  topic           text NOT NULL,
  payload         jsonb NOT NULL,
  state           outbox_state NOT NULL DEFAULT 'pending',
  attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- While 'delivering': the lease. A worker that died leaves the row to be reclaimed once it passes.
  locked_until    timestamptz,
  last_error      text,
  last_status     integer,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  CHECK (idempotency_key = fulfilment_id),
  CHECK ((state = 'delivering') = (locked_until IS NOT NULL))
);
-- The claim query's scan: only rows still to do.
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at, id) WHERE state IN ('pending', 'delivering');
