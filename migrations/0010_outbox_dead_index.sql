-- The dead-lettered outbox rows, counted at every metrics scrape (oncepay_outbox_dead, the dead-letter alert): a
-- partial index keeps that count from reading the delivered rows, which only grow. Takes a SHARE lock on outbox
-- while it builds (writes wait; on a large table, run `oncepay migrate` in a quiet minute).
CREATE INDEX outbox_dead_idx ON outbox (id) WHERE state = 'dead';
