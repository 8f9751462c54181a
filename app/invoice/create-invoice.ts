// Create an invoice outside an HTTP request (the SDK): checked, its mint's decimals known, stored in one transaction.
// Idempotent on the merchant's invoice id: the same terms again return the stored invoice (the same reference key
// and checkout link); other terms are INVOICE ID_EXISTS, never a second invoice.
import { Pool } from 'pg';
import { OncepayError } from '../../common/errors';
import { INVOICE_CODES } from '../../common/errors/codes';
import { withTransaction } from '../../db/sql';
import { MerchantRow } from '../merchant/store';
import { prepareInvoice, sameInvoiceTerms } from './prepare';
import { insertInvoice, mintDecimals, ReadMintDecimals } from './store';
import type { InvoiceInput, InvoiceRow } from './types';

export async function createInvoice(
  db: Pool,
  merchant: MerchantRow,
  input: InvoiceInput,
  readMintDecimals: ReadMintDecimals | undefined,
  fieldPrefix = '',
): Promise<{ created: boolean; row: InvoiceRow }> {
  const terms = prepareInvoice(merchant, input, new Date(), fieldPrefix);
  const decimals = await mintDecimals(db, terms.mint, readMintDecimals, `${fieldPrefix}mint`);
  const r = await withTransaction(db, (c) => insertInvoice(c, terms, decimals));
  if (!r.created && !sameInvoiceTerms(r.row, terms))
    throw new OncepayError(
      INVOICE_CODES.ID_EXISTS,
      `invoiceId ${JSON.stringify(terms.invoiceId)} already exists with other terms`,
      { field: `${fieldPrefix}invoiceId` },
    );
  return r;
}
