-- Payouts and the merchant API. `merchants` belongs to the ledger, so the API's merchants are `api_merchants`.

-- A merchant as the API knows it: who calls (API key, stored as sha256 hex only), and the on-chain accounts a
-- payout of theirs uses. One row per (program, merchant config account).
CREATE TABLE api_merchants (
  id               bigserial PRIMARY KEY,
  name             text NOT NULL,
  api_key_hash     text NOT NULL UNIQUE CHECK (api_key_hash ~ '^[0-9a-f]{64}$'),
  program_id       text NOT NULL,
  merchant_address text NOT NULL,  -- the merchant config PDA ["merchant", merchant_authority]
  vault            text NOT NULL,  -- token account owned by the merchant PDA that payouts are paid from
  token_program    text NOT NULL DEFAULT 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (program_id, merchant_address)
);

-- Order matters: pending < executing < (succeeded | conflict | failed); the last three are final.
--   pending   : row stored, no attempt signed yet
--   executing : at least one attempt exists whose outcome is not settled
--   succeeded : the op account exists and matches this row (result_signature/result_slot say where)
--   conflict  : the op account exists but records another recipient/amount/mint: flagged, never "fixed"
--   failed    : an attempt landed with a program error other than OperationAlreadyConsumed
CREATE TYPE payout_state AS ENUM ('pending', 'executing', 'succeeded', 'conflict', 'failed');

-- One row per business operation. Everything executePayout needs is in the row (no lookups elsewhere), so the
-- op_id and every key derive from durable data alone.
CREATE TABLE payouts (
  id               bigserial PRIMARY KEY,
  merchant_id      bigint NOT NULL REFERENCES api_merchants (id),
  payout_id        text NOT NULL,              -- the merchant's own id: the business operation
  program_id       text NOT NULL,
  merchant_address text NOT NULL,
  vault            text NOT NULL,
  token_program    text NOT NULL,
  recipient        text NOT NULL,              -- recipient token account
  mint             text NOT NULL,
  amount           numeric(20,0) NOT NULL CHECK (amount >= 0 AND amount <= 18446744073709551615),
  op_id            text NOT NULL CHECK (op_id ~ '^[0-9a-f]{64}$'),
  op_pda           text NOT NULL,
  op_bump          smallint NOT NULL CHECK (op_bump BETWEEN 0 AND 255),
  state            payout_state NOT NULL DEFAULT 'pending',
  result_signature text,                       -- the attempt that executed the op (NULL if not in our journal)
  result_slot      bigint,
  conflict         jsonb,                      -- what the op account records when it disagrees with this row
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  UNIQUE (merchant_id, payout_id),
  UNIQUE (program_id, op_pda)
);
CREATE INDEX payouts_unfinished ON payouts (id) WHERE state IN ('pending', 'executing');

-- Order matters: built < sent < (landed | failed | expired).
--   built   : signed and persisted, maybe never sent (a crash can stop here)
--   sent    : handed to an RPC node at least once (delivery uncertain)
--   landed  : found confirmed/finalized without error
--   failed  : found confirmed/finalized with an error (error says which)
--   expired : blockhash expired unlanded AND the op account was absent at finalized commitment
CREATE TYPE payout_attempt_status AS ENUM ('built', 'sent', 'landed', 'failed', 'expired');

-- One row per signed transaction (an attempt). Rebroadcasting the same bytes is the same attempt; re-signing
-- with a new blockhash is a new row. Persisted BEFORE the first send.
CREATE TABLE payout_attempts (
  id                      bigserial PRIMARY KEY,
  payout_id               bigint NOT NULL REFERENCES payouts (id),
  attempt_no              integer NOT NULL CHECK (attempt_no >= 1),
  signature               text NOT NULL UNIQUE,
  blockhash               text NOT NULL,
  last_valid_block_height bigint NOT NULL,
  tx_bytes                bytea NOT NULL,    -- the exact serialized signed transaction
  status                  payout_attempt_status NOT NULL DEFAULT 'built',
  slot                    bigint,
  error                   text,
  send_count              integer NOT NULL DEFAULT 0,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  UNIQUE (payout_id, attempt_no)
);

-- Idempotency-Key of POST /v1/payouts: scoped per merchant, the canonical request's hash and the response kept
-- for replay. Rows are kept at least 24 h (pruneIdempotencyKeys refuses a shorter retention).
CREATE TYPE idempotency_state AS ENUM ('in_flight', 'complete');
CREATE TABLE idempotency_keys (
  merchant_id     bigint NOT NULL REFERENCES api_merchants (id),
  key             text NOT NULL,
  request_hash    text NOT NULL CHECK (request_hash ~ '^[0-9a-f]{64}$'),
  state           idempotency_state NOT NULL DEFAULT 'in_flight',
  response_status integer,
  response_body   jsonb,
  locked_at       timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  completed_at    timestamptz,
  PRIMARY KEY (merchant_id, key),
  CHECK ((state = 'complete') = (response_status IS NOT NULL))
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
