-- Invoices in the merchant API (issue 28). The ledger's `invoices` row stays what the indexer matches and credits
-- (by its reference key and receiving address); `api_invoices` adds what the API and the checkout page need, one
-- row per ledger invoice, keyed by the merchant: merchant A's "inv-1" and merchant B's "inv-1" are two invoices.
-- The ledger invoice id is derived from durable data (`api:<merchant id>:<invoice id>`), never random.

-- Where a merchant's invoices are paid unless a request names another address (a wallet: Solana Pay's recipient).
ALTER TABLE api_merchants ADD COLUMN receiving_address text;

-- A mint's decimals, read from the chain once (SOL is 9 and never stored here).
CREATE TABLE mint_decimals (
  mint       text PRIMARY KEY,
  decimals   smallint NOT NULL CHECK (decimals BETWEEN 0 AND 255),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_invoices (
  id                bigserial PRIMARY KEY,
  merchant_id       bigint NOT NULL REFERENCES api_merchants (id),
  invoice_id        text NOT NULL,                            -- the merchant's own id
  ledger_invoice_id text NOT NULL UNIQUE REFERENCES invoices (id),
  -- The public checkout link's token: ≥ 128 random bits, never the merchant's id.
  checkout_id       text NOT NULL UNIQUE CHECK (checkout_id ~ '^[A-Za-z0-9_-]{22,64}$'),
  recipient         text NOT NULL,                            -- Solana Pay recipient (wallet)
  decimals          smallint NOT NULL CHECK (decimals BETWEEN 0 AND 255),
  label             text,
  message           text,
  memo              text,
  expires_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant_id, invoice_id)
);
-- The list's order and cursor: newest first, per merchant.
CREATE INDEX api_invoices_by_merchant ON api_invoices (merchant_id, id DESC);
