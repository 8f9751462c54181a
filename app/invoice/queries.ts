// Every statement of the API's invoices (api_invoices, mint_decimals: migration 0300), and the ledger rows an
// invoice view reads. Run through db/sql by store.ts.
import type { Query } from '../../db/sql';

/** An API invoice joined with its ledger row; `status` says 'expired' for an open invoice past its expiry. */
const SELECT_INVOICE = `
  SELECT a.id, a.merchant_id, a.invoice_id, a.ledger_invoice_id, a.checkout_id, a.recipient, a.decimals, a.label,
         a.message, a.memo, a.expires_at, a.created_at, i.mint, i.expected_amount, i.credited_amount, i.reference_key,
         i.paid_at,
         CASE WHEN i.status = 'open' AND a.expires_at IS NOT NULL AND a.expires_at <= now() THEN 'expired'
              ELSE i.status::text END AS status
    FROM api_invoices a JOIN invoices i ON i.id = a.ledger_invoice_id`;

export function insertLedgerInvoice(x: {
  id: string;
  merchant: string;
  mint: string;
  amount: string;
  recipient: string;
  reference: string;
}): Query {
  return {
    text: `INSERT INTO invoices (id, merchant, mint, expected_amount, deposit_address, reference_key)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
    values: [x.id, x.merchant, x.mint, x.amount, x.recipient, x.reference],
  };
}

export function insertApiInvoice(x: {
  merchantId: string;
  invoiceId: string;
  ledgerInvoiceId: string;
  checkoutId: string;
  recipient: string;
  decimals: number;
  label: string | null;
  message: string | null;
  memo: string | null;
  expiresAt: Date | null;
}): Query {
  return {
    text: `INSERT INTO api_invoices (merchant_id, invoice_id, ledger_invoice_id, checkout_id, recipient, decimals, label,
                                     message, memo, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (merchant_id, invoice_id) DO NOTHING`,
    values: [
      x.merchantId,
      x.invoiceId,
      x.ledgerInvoiceId,
      x.checkoutId,
      x.recipient,
      x.decimals,
      x.label,
      x.message,
      x.memo,
      x.expiresAt,
    ],
  };
}

export function getInvoiceOfMerchant(merchantId: string, invoiceId: string): Query {
  return { text: `${SELECT_INVOICE} WHERE a.merchant_id = $1 AND a.invoice_id = $2`, values: [merchantId, invoiceId] };
}

export function getInvoiceByCheckoutId(checkoutId: string): Query {
  return { text: `${SELECT_INVOICE} WHERE a.checkout_id = $1`, values: [checkoutId] };
}

export interface ListFilter {
  merchantId: string;
  status?: 'open' | 'paid' | 'expired';
  createdFrom?: Date;
  createdTo?: Date;
  /** Rows with a smaller api_invoices.id than this (the cursor). */
  before?: string;
  limit: number;
}

/** Newest first; one more row than `limit`, so the caller knows whether a next page exists. */
export function listInvoices(f: ListFilter): Query {
  return {
    text: `SELECT * FROM (${SELECT_INVOICE} WHERE a.merchant_id = $1
              AND ($3::timestamptz IS NULL OR a.created_at >= $3)
              AND ($4::timestamptz IS NULL OR a.created_at < $4)
              AND ($5::bigint IS NULL OR a.id < $5)) x
            WHERE ($2::text IS NULL OR x.status = $2)
            ORDER BY x.id DESC LIMIT $6`,
    values: [f.merchantId, f.status ?? null, f.createdFrom ?? null, f.createdTo ?? null, f.before ?? null, f.limit + 1],
  };
}

export function receiptsOf(ledgerInvoiceId: string): Query {
  return {
    text: `SELECT signature, ix_index, inner_index, slot, amount, mint, source, first_source, created_at
             FROM receipts WHERE invoice_id = $1 ORDER BY slot NULLS LAST, id`,
    values: [ledgerInvoiceId],
  };
}

export function exceptionsOf(ledgerInvoiceId: string): Query {
  return {
    text: `SELECT e.id, e.kind, e.amount, e.detail, e.created_at, r.signature
             FROM exceptions e JOIN receipts r ON r.id = e.receipt_id
            WHERE e.invoice_id = $1 ORDER BY e.id`,
    values: [ledgerInvoiceId],
  };
}

export function fulfilmentOf(ledgerInvoiceId: string): Query {
  return {
    text: `SELECT f.id, o.state, o.attempts, o.last_status, o.delivered_at
             FROM fulfilments f LEFT JOIN outbox o ON o.fulfilment_id = f.id WHERE f.invoice_id = $1`,
    values: [ledgerInvoiceId],
  };
}

export function getMintDecimals(mint: string): Query {
  return { text: 'SELECT decimals FROM mint_decimals WHERE mint = $1', values: [mint] };
}

export function putMintDecimals(mint: string, decimals: number): Query {
  return {
    text: 'INSERT INTO mint_decimals (mint, decimals) VALUES ($1, $2) ON CONFLICT (mint) DO NOTHING',
    values: [mint, decimals],
  };
}

export function countExceptions(ledgerInvoiceId: string): Query {
  return { text: 'SELECT count(*) AS n FROM exceptions WHERE invoice_id = $1', values: [ledgerInvoiceId] };
}
