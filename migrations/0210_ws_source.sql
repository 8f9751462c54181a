-- The websocket subscription source (`oncepay indexer stream --ws`: logsSubscribe + getTransaction) is a delivery
-- path of its own, beside the Yellowstone stream: its receipts, duplicates and checkpoint are counted under 'ws'.
ALTER TYPE receipt_source ADD VALUE IF NOT EXISTS 'ws';
