// Invoices in the ledger: creating them (idempotent by id) and reading them, and the columns an invoices row shares
// with the matcher's state. Matching receipts to invoices and writing credits is credits.ts.
import type { Pool, QueryResultRow } from 'pg';
import { exec, one } from '../../db/sql';
import { isBaseUnits } from '../../common/amount';
import { OncepayError } from '../../common/errors';
import type { InvoiceState } from '../match/types';
import { LEDGER_CODES } from '../../common/errors/codes';
import * as q from './queries';
import type { InvoiceRow, NewInvoice } from './types';

export interface Invoices {
  /** Idempotent: the same invoice again is a no-op; the same id with other fields is INVOICE_CONFLICT. */
  createInvoice(inv: NewInvoice): Promise<{ created: boolean; invoice: InvoiceRow }>;
  getInvoice(id: string): Promise<InvoiceRow | null>;
}

/** The columns of an invoices row that both the matcher's state and the ledger's InvoiceRow carry. */
export function invoiceFields(x: QueryResultRow): Omit<InvoiceState, 'createdSeq'> {
  return {
    id: x.id,
    merchant: x.merchant,
    mint: x.mint,
    expectedAmount: BigInt(x.expected_amount),
    creditedAmount: BigInt(x.credited_amount),
    depositAddress: x.deposit_address,
    referenceKey: x.reference_key,
    status: x.status,
  };
}

export function createInvoices(db: Pool): Invoices {
  async function getInvoice(id: string): Promise<InvoiceRow | null> {
    const x = await one(db, q.getInvoice(id));
    if (!x) return null;
    return { ...invoiceFields(x), paidAt: x.paid_at ? new Date(x.paid_at).toISOString() : null };
  }

  async function createInvoice(inv: NewInvoice): Promise<{ created: boolean; invoice: InvoiceRow }> {
    const bad = (m: string) => new OncepayError(LEDGER_CODES.INVALID_INVOICE, m, { id: inv.id });
    if (typeof inv.id !== 'string' || inv.id.length === 0) throw bad('id must be a non-empty string');
    if (typeof inv.mint !== 'string' || inv.mint.length === 0) throw bad('mint must be a non-empty string');
    if (!isBaseUnits(inv.expectedAmount) || inv.expectedAmount === 0n) throw bad('amount must be a u64 above 0');
    const depositAddress = inv.depositAddress ?? null;
    const referenceKey = inv.referenceKey ?? null;
    if (depositAddress === null && referenceKey === null)
      throw bad('an invoice needs a deposit address or a reference key');
    const merchant = inv.merchant ?? 'default';
    const inserted = await exec(
      db,
      q.insertInvoice({
        id: inv.id,
        merchant,
        mint: inv.mint,
        expected: inv.expectedAmount.toString(),
        depositAddress,
        referenceKey,
      }),
    );
    const existing = await getInvoice(inv.id);
    if (!existing) {
      // Not inserted and not there: the reference key belongs to another invoice.
      throw new OncepayError(
        LEDGER_CODES.INVOICE_CONFLICT,
        `reference key ${referenceKey} already belongs to another invoice`,
        { id: inv.id, referenceKey },
      );
    }
    const same =
      existing.merchant === merchant &&
      existing.mint === inv.mint &&
      existing.expectedAmount === inv.expectedAmount &&
      existing.depositAddress === depositAddress &&
      existing.referenceKey === referenceKey;
    if (!same)
      throw new OncepayError(LEDGER_CODES.INVOICE_CONFLICT, `invoice ${inv.id} exists with other fields`, {
        id: inv.id,
      });
    return { created: inserted === 1, invoice: existing };
  }

  return { createInvoice, getInvoice };
}
