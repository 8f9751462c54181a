// Checking an invoice request (API body or SDK input) and deriving what its rows need, without I/O: the reference
// key and checkout id are drawn by the caller once and stored; the ledger's invoice id derives from durable data.
import { isOncepayError, OncepayError } from '../../common/errors';
import { INVOICE_CODES } from '../../common/errors/codes';
import { parseAmount } from '../payout/create-payout';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { MerchantRow } from '../merchant/store';
import type { InvoiceInput, InvoiceTerms } from './types';
import { address, isPayoutId } from '../types';

export const TEXT_LIMITS = { label: 100, message: 500, memo: 500 } as const;

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

function text(x: unknown, name: keyof typeof TEXT_LIMITS, prefix: string): string | null {
  if (x === undefined || x === null) return null;
  const field = prefix + name;
  if (typeof x !== 'string' || x.length === 0 || x.length > TEXT_LIMITS[name] || CONTROL.test(x))
    throw new OncepayError(
      INVOICE_CODES.TEXT_INVALID,
      `${field} must be 1–${TEXT_LIMITS[name]} characters without control characters`,
      { field },
    );
  return x;
}

/** An expiry: an ISO 8601 string (the API) or a Date (the SDK), in the future. */
function expiry(x: unknown, now: Date, field: string): Date | null {
  if (x === undefined || x === null) return null;
  const t = x instanceof Date ? x : typeof x === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(x) ? new Date(x) : null;
  if (t === null || Number.isNaN(t.getTime()))
    throw new OncepayError(INVOICE_CODES.EXPIRY_INVALID, `${field} must be an ISO 8601 time: ${JSON.stringify(x)}`, {
      field,
    });
  if (t.getTime() <= now.getTime())
    throw new OncepayError(INVOICE_CODES.EXPIRY_INVALID, `${field} must be in the future`, { field });
  return t;
}

/** The amount, its refusal naming the field. */
function amountOf(x: unknown, field: string): bigint {
  try {
    return parseAmount(x as string | bigint);
  } catch (e) {
    if (!isOncepayError(e)) throw e;
    throw new OncepayError(e.code, `${field}: ${e.message.replace(/^ONCEPAY__[A-Z_]+: /, '')}`, { field });
  }
}

/**
 * Check an invoice request of `merchant` at time `now`; throws OncepayError with a specific code whose field is
 * `prefix` + the input's field name, and stores nothing.
 */
export function prepareInvoice(merchant: MerchantRow, input: InvoiceInput, now: Date, prefix = ''): InvoiceTerms {
  if (!isPayoutId(input.invoiceId))
    throw new OncepayError(
      INVOICE_CODES.ID_MALFORMED,
      `${prefix}invoiceId must be 1–200 bytes of UTF-8 without control characters: ${JSON.stringify(input.invoiceId)}`,
      { field: `${prefix}invoiceId` },
    );
  const amount = amountOf(input.amount, `${prefix}amount`);
  if (amount === 0n)
    throw new OncepayError(PAYOUT_CODES.AMOUNT_ZERO, `${prefix}amount: an invoice is at least 1 base unit`, {
      field: `${prefix}amount`,
    });
  const mint = input.mint === 'SOL' ? 'SOL' : address(input.mint, `${prefix}mint`);
  const named = input.recipient === undefined ? null : address(input.recipient, `${prefix}recipient`);
  const recipient = named ?? merchant.receivingAddress;
  if (recipient === null)
    throw new OncepayError(
      INVOICE_CODES.RECEIVING_ADDRESS_MISSING,
      `name ${prefix}recipient, or configure the merchant's receiving address (\`oncepay payout merchant-add --receiving-address\`)`,
      { field: `${prefix}recipient` },
    );
  return {
    merchantId: merchant.id,
    invoiceId: input.invoiceId,
    amount,
    mint,
    recipient,
    label: text(input.label, 'label', prefix),
    message: text(input.message, 'message', prefix),
    memo: text(input.memo, 'memo', prefix),
    expiresAt: expiry(input.expiresAt, now, `${prefix}expiresAt`),
  };
}

/** The ledger's invoice id: unique across merchants, derived from the merchant and its invoice id only. */
export function ledgerInvoiceId(merchantId: string, invoiceId: string): string {
  return `api:${merchantId}:${invoiceId}`;
}

/** Whether a stored invoice was asked for with these same terms (a retry, not a new invoice). */
export function sameInvoiceTerms(a: InvoiceTerms, b: InvoiceTerms): boolean {
  return (
    a.amount === b.amount &&
    a.mint === b.mint &&
    a.recipient === b.recipient &&
    a.label === b.label &&
    a.message === b.message &&
    a.memo === b.memo &&
    (a.expiresAt?.getTime() ?? null) === (b.expiresAt?.getTime() ?? null)
  );
}
