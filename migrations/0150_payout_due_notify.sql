-- A new payout wakes the payout workers at once: every statement that inserts payouts notifies the channel
-- `oncepay_payout_due` with the table's schema (workers of several schemas may share one server; each listens for
-- its own). Delivered at commit, and only then, so a woken worker's claim sees the rows. A notification is a hint:
-- workers still poll (`--idle-ms`), so a lost one (a listener reconnecting) costs at most one idle pause.
CREATE FUNCTION payouts_notify_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('oncepay_payout_due', TG_TABLE_SCHEMA);
  RETURN NULL;
END
$$;

CREATE TRIGGER payouts_notify_due AFTER INSERT ON payouts FOR EACH STATEMENT EXECUTE FUNCTION payouts_notify_due();
