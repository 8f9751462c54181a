-- One name, one thing. The ledger's `merchants` table (0001) never held a merchant: it says where a merchant's
-- fulfilment webhooks go and which secret signs them. "Merchant" also names `api_merchants` (who calls the
-- merchant API, 0100) and the on-chain merchant account (the PDA ["merchant", merchant_authority]). So the table is
-- `webhook_endpoints`, keyed by `merchant` (the same text as invoices.merchant, fulfilments.merchant and
-- outbox.merchant), with `url` and `secret`. Rows are kept as they are.
ALTER TABLE merchants RENAME TO webhook_endpoints;
ALTER TABLE webhook_endpoints RENAME COLUMN id TO merchant;
ALTER TABLE webhook_endpoints RENAME COLUMN webhook_url TO url;
ALTER TABLE webhook_endpoints RENAME COLUMN webhook_secret TO secret;
ALTER INDEX merchants_pkey RENAME TO webhook_endpoints_pkey;
