// The ledger's books must balance whatever happened: for every invoice, what was credited plus the exceptions
// raised against it equals the money of the receipts matched to it.
import type { Pool } from 'pg';

export async function unbalancedInvoices(pool: Pool): Promise<unknown[]> {
  const { rows } = await pool.query(`
    SELECT i.id, i.credited_amount::text AS credited,
           COALESCE((SELECT sum(amount) FROM exceptions e WHERE e.invoice_id = i.id), 0)::text AS excepted,
           COALESCE((SELECT sum(amount) FROM receipts r WHERE r.invoice_id = i.id), 0)::text AS received
      FROM invoices i
     WHERE i.credited_amount + COALESCE((SELECT sum(amount) FROM exceptions e WHERE e.invoice_id = i.id), 0)
        <> COALESCE((SELECT sum(amount) FROM receipts r WHERE r.invoice_id = i.id), 0)`);
  return rows;
}
