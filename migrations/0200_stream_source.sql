-- The subscription source (`oncepay indexer stream`: Yellowstone gRPC or websocket logsSubscribe) is a delivery
-- path of its own: its receipts, duplicates and checkpoint are counted under 'stream'.
ALTER TYPE receipt_source ADD VALUE IF NOT EXISTS 'stream';
