// The fulfilment operation of a paid invoice: its id is a function of the invoice id alone, so however many
// times (or by however many processes) the invoice is found paid, it is the same operation and the same
// Idempotency-Key on the merchant's side.
import * as crypto from 'crypto';

const DOMAIN = 'oncepay:fulfilment:v1';

export function fulfilmentOpId(invoiceId: string): string {
  return (
    'ful_' +
    crypto
      .createHash('sha256')
      .update(DOMAIN)
      .update(Buffer.from([0]))
      .update(invoiceId, 'utf8')
      .digest('hex')
  );
}

export interface InvoicePaidPayload {
  type: 'invoice.paid';
  fulfilmentId: string;
  invoiceId: string;
  merchant: string;
  mint: string;
  /** Decimal string of base units. */
  amount: string;
}

/** The body the merchant receives. Built from durable invoice fields only, so every attempt sends the same bytes. */
export function invoicePaidPayload(inv: {
  id: string;
  merchant: string;
  mint: string;
  expectedAmount: bigint;
}): InvoicePaidPayload {
  return {
    type: 'invoice.paid',
    fulfilmentId: fulfilmentOpId(inv.id),
    invoiceId: inv.id,
    merchant: inv.merchant,
    mint: inv.mint,
    amount: inv.expectedAmount.toString(10),
  };
}
