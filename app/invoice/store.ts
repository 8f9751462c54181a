// Reads and writes of API invoices (queries.ts's statements through db/sql): the ledger row the indexer credits and
// the api_invoices row beside it, written in one transaction; rows mapped with NUMERIC text → bigint.
import { Keypair } from '@solana/web3.js';
import type { PoolClient, QueryResultRow } from 'pg';
import { OncepayError } from '../../common/errors';
import { INVOICE_CODES } from '../../common/errors/codes';
import { Db, exec, one, rows } from '../../db/sql';
import { newCheckoutId } from './checkout-id';
import { ledgerInvoiceId } from './prepare';
import * as q from './queries';
import { SOL_DECIMALS } from './tokens';
import type { InvoiceDetail, InvoiceRow, InvoiceTerms } from './types';

function toInvoice(r: QueryResultRow): InvoiceRow {
  return {
    id: String(r.id),
    merchantId: String(r.merchant_id),
    invoiceId: r.invoice_id,
    ledgerInvoiceId: r.ledger_invoice_id,
    checkoutId: r.checkout_id,
    reference: r.reference_key,
    amount: BigInt(r.expected_amount),
    mint: r.mint,
    recipient: r.recipient,
    decimals: Number(r.decimals),
    label: r.label,
    message: r.message,
    memo: r.memo,
    expiresAt: r.expires_at,
    status: r.status,
    creditedAmount: BigInt(r.credited_amount),
    paidAt: r.paid_at,
    createdAt: r.created_at,
  };
}

/**
 * Store an invoice (inside the caller's transaction on `c`): the ledger row with a fresh reference key, then the API
 * row with a fresh checkout id. The same invoice id again stores nothing and returns the stored invoice.
 */
export async function insertInvoice(
  c: PoolClient,
  terms: InvoiceTerms,
  decimals: number,
): Promise<{ created: boolean; row: InvoiceRow }> {
  const ledgerId = ledgerInvoiceId(terms.merchantId, terms.invoiceId);
  const ledger = await exec(
    c,
    q.insertLedgerInvoice({
      id: ledgerId,
      merchant: terms.merchantId,
      mint: terms.mint,
      amount: terms.amount.toString(),
      recipient: terms.recipient,
      reference: Keypair.generate().publicKey.toBase58(),
    }),
  );
  if (ledger === 1) {
    await exec(c, q.insertApiInvoice({ ...terms, ledgerInvoiceId: ledgerId, checkoutId: newCheckoutId(), decimals }));
  }
  const row = await getInvoice(c, terms.merchantId, terms.invoiceId);
  if (!row)
    throw new OncepayError(
      INVOICE_CODES.ID_EXISTS,
      `the ledger already holds invoice ${ledgerId} (made outside the API)`,
    );
  return { created: ledger === 1, row };
}

/** The invoice `invoiceId` of this merchant (another merchant's is null: never read for this one). */
export async function getInvoice(db: Db, merchantId: string, invoiceId: string): Promise<InvoiceRow | null> {
  const r = await one(db, q.getInvoiceOfMerchant(merchantId, invoiceId));
  return r ? toInvoice(r) : null;
}

export async function getInvoiceByCheckoutId(db: Db, checkoutId: string): Promise<InvoiceRow | null> {
  const r = await one(db, q.getInvoiceByCheckoutId(checkoutId));
  return r ? toInvoice(r) : null;
}

/** A page of a merchant's invoices, newest first, and whether more follow. */
export async function listInvoices(db: Db, f: q.ListFilter): Promise<{ rows: InvoiceRow[]; more: boolean }> {
  const got = (await rows(db, q.listInvoices(f))).map(toInvoice);
  return { rows: got.slice(0, f.limit), more: got.length > f.limit };
}

/** What the ledger did with an invoice: its receipts, exceptions and fulfilment (with its delivery). */
export async function invoiceDetail(db: Db, inv: InvoiceRow): Promise<InvoiceDetail> {
  // One after another: `db` may be a single connection (inside the create request's transaction).
  const receipts = await rows(db, q.receiptsOf(inv.ledgerInvoiceId));
  const exceptions = await rows(db, q.exceptionsOf(inv.ledgerInvoiceId));
  const fulfilment = await one(db, q.fulfilmentOf(inv.ledgerInvoiceId));
  return {
    receipts: receipts.map((r) => ({
      signature: r.signature,
      ixIndex: r.ix_index,
      innerIndex: r.inner_index,
      slot: r.slot === null ? null : BigInt(r.slot),
      amount: BigInt(r.amount),
      mint: r.mint,
      source: r.source,
      deliveredBy: r.first_source,
    })),
    exceptions: exceptions.map((e) => ({
      id: String(e.id),
      kind: e.kind,
      amount: BigInt(e.amount),
      detail: e.detail,
      signature: e.signature,
      createdAt: e.created_at,
    })),
    fulfilment: fulfilment
      ? {
          id: fulfilment.id,
          delivery: fulfilment.state,
          attempts: Number(fulfilment.attempts ?? 0),
          lastStatus: fulfilment.last_status,
          deliveredAt: fulfilment.delivered_at,
        }
      : null,
  };
}

/** How many exceptions the ledger raised on this invoice (overpayment, late payment, …). */
export async function exceptionCount(db: Db, ledgerInvoiceId: string): Promise<number> {
  return Number((await one<{ n: string }>(db, q.countExceptions(ledgerInvoiceId)))!.n);
}

/** Reads a mint's decimals from the chain: null when the account is not a token mint. */
export type ReadMintDecimals = (mint: string) => Promise<number | null>;

/** A mint's decimals: SOL 9; else stored, else read from the chain once and stored. */
export async function mintDecimals(
  db: Db,
  mint: string,
  read: ReadMintDecimals | undefined,
  field = 'mint',
): Promise<number> {
  if (mint === 'SOL') return SOL_DECIMALS;
  const stored = await one<{ decimals: number }>(db, q.getMintDecimals(mint));
  if (stored) return Number(stored.decimals);
  const d = read ? await read(mint) : null;
  if (d === null)
    throw new OncepayError(
      INVOICE_CODES.MINT_NOT_FOUND,
      read
        ? `${mint} is not a token mint on the chain`
        : `the decimals of ${mint} are unknown and no RPC is configured`,
      { field },
    );
  await exec(db, q.putMintDecimals(mint, d));
  return d;
}
