-- receipts.invoice_id names an invoice: checked once per statement, over the rows the statement wrote, instead of
-- once per row. The foreign key this replaces ran one lookup of invoices per inserted row (its row trigger,
-- ~2.5 µs of ~14 µs of backend time per receipt, bench/ingest.ts); the set-based check below ~0.6 µs.
-- It keeps every promise the foreign key made:
--   * a statement that inserts or updates receipts naming an invoice that is not there fails with
--     foreign_key_violation (23503), whatever wrote it (the ledger's COPY, INSERT or UPDATE, or a hand);
--   * the invoices it names are locked FOR KEY SHARE until the transaction ends, as the foreign key's check locks
--     them (in no set order, as the key's row-by-row checks did; the ledger holds them FOR UPDATE already), so no
--     concurrent transaction deletes or re-keys one;
--   * an invoice that a receipt names cannot be deleted, re-keyed or truncated away (23503).
ALTER TABLE receipts DROP CONSTRAINT receipts_invoice_id_fkey;

-- The statement's new rows are `new_rows` (the triggers' transition table): each invoice they name is looked up
-- once, by its primary key, and locked.
CREATE FUNCTION receipts_check_invoice() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  named   bigint;
  present bigint;
  missing text;
BEGIN
  SELECT count(*), count(l.id) INTO named, present
    FROM (SELECT n.invoice_id FROM new_rows n WHERE n.invoice_id IS NOT NULL GROUP BY n.invoice_id) AS d
    LEFT JOIN LATERAL (SELECT i.id FROM invoices i WHERE i.id = d.invoice_id FOR KEY SHARE) AS l ON true;
  IF present <> named THEN
    SELECT n.invoice_id INTO missing
      FROM new_rows n
     WHERE n.invoice_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.id = n.invoice_id)
     LIMIT 1;
    RAISE EXCEPTION 'insert or update on table "receipts" violates its invoice check'
      USING ERRCODE = 'foreign_key_violation', TABLE = 'receipts', COLUMN = 'invoice_id',
            CONSTRAINT = 'receipts_invoice_id_check',
            DETAIL = format('Key (invoice_id)=(%s) is not present in table "invoices".', missing);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER receipts_invoice_check_insert AFTER INSERT ON receipts
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION receipts_check_invoice();
CREATE TRIGGER receipts_invoice_check_update AFTER UPDATE ON receipts
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION receipts_check_invoice();

-- The other side: an invoice a receipt names stays (its id too). A writer of that receipt holds the invoice
-- FOR KEY SHARE until it commits, so a DELETE or re-key waits for it and then sees the receipt here.
CREATE FUNCTION invoices_keep_named() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM receipts r WHERE r.invoice_id = OLD.id) THEN
    RAISE EXCEPTION 'update or delete on table "invoices" violates the receipts'' invoice check'
      USING ERRCODE = 'foreign_key_violation', TABLE = 'invoices', CONSTRAINT = 'receipts_invoice_id_check',
            DETAIL = format('Key (id)=(%s) is still referenced from table "receipts".', OLD.id);
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER invoices_keep_named_delete BEFORE DELETE ON invoices
  FOR EACH ROW EXECUTE FUNCTION invoices_keep_named();
CREATE TRIGGER invoices_keep_named_rekey BEFORE UPDATE OF id ON invoices
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION invoices_keep_named();

-- TRUNCATE skips row triggers: after one that emptied invoices, no receipt may still name one (truncating
-- receipts in the same statement, as a reset does, passes).
CREATE FUNCTION invoices_truncate_keeps_named() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM receipts r WHERE r.invoice_id IS NOT NULL) THEN
    RAISE EXCEPTION 'truncate of table "invoices" violates the receipts'' invoice check'
      USING ERRCODE = 'foreign_key_violation', TABLE = 'invoices', CONSTRAINT = 'receipts_invoice_id_check',
            HINT = 'Truncate receipts in the same statement.';
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER invoices_truncate_keeps_named AFTER TRUNCATE ON invoices
  FOR EACH STATEMENT EXECUTE FUNCTION invoices_truncate_keeps_named();
