-- The checkout page learns at once that the ledger changed an API invoice: paid (the ledger's credit at finality)
-- or an exception raised on it (overpayment, late payment). Each notifies `oncepay_invoice_changed` with
-- "<schema> <ledger invoice id>", delivered at commit and only then. Only invoices made through the API
-- (id 'api:…') notify, so the ledger's ingest of other rows pays nothing. A hint: a page that missed one is right
-- again on its next read (a refresh, a reconnect).
CREATE FUNCTION invoices_notify_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('oncepay_invoice_changed', TG_TABLE_SCHEMA || ' ' || NEW.invoice_id);
  RETURN NULL;
END
$$;

CREATE FUNCTION invoices_notify_paid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('oncepay_invoice_changed', TG_TABLE_SCHEMA || ' ' || NEW.id);
  RETURN NULL;
END
$$;

CREATE TRIGGER invoices_notify_paid AFTER UPDATE OF status ON invoices
  FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status AND NEW.id LIKE 'api:%')
  EXECUTE FUNCTION invoices_notify_paid();

CREATE TRIGGER exceptions_notify_changed AFTER INSERT ON exceptions
  FOR EACH ROW WHEN (NEW.invoice_id LIKE 'api:%')
  EXECUTE FUNCTION invoices_notify_changed();
