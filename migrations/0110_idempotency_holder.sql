-- An in-flight Idempotency-Key belongs to the database session that claimed it: the request holds that one
-- connection from claim to completion. The session is named by (pid, backend_start) — a pid alone is reused
-- after a restart. When pg_stat_activity no longer shows that session (the process died, the connection was
-- terminated, the server restarted), the key is free for the client's retry at once, not after a fixed time.
ALTER TABLE idempotency_keys
  ADD COLUMN holder_pid     integer,
  ADD COLUMN holder_started timestamptz;

COMMENT ON COLUMN idempotency_keys.holder_pid IS 'pg_backend_pid() of the session holding an in_flight key';
COMMENT ON COLUMN idempotency_keys.holder_started IS 'backend_start of that session (pid + start identify it across restarts)';
