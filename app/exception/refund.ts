// Settle an exception exactly once: refund it (a payout whose payout id is derived from the exception's receipt
// key, so it goes through the same op-id/PDA path as every payout and can never be paid twice), or resolve it
// without moving money. The refund row, its link to the exception and the exception's lock are one database
// transaction; executing the payout afterwards is runPayout's job (journal + op account), so a crash between
// the two is finished by running the same command again (or `oncepay payout resume`).
import { Pool, PoolClient } from 'pg';
import { OncepayError } from '../../common/errors';
import { withTransaction } from '../../db/sql';
import { failpoint } from '../../common/failpoint';
import { PayoutInput, createPayout, preparePayout, sameTerms } from '../payout/create-payout';
import { RunPayoutDeps, runPayout } from '../payout/run-payout';
import { MerchantRow, getMerchant } from '../merchant/store';
import { PayoutRow, getPayout } from '../payout/store';
import { address } from '../types';
import { EXCEPTION_CODES } from '../../common/errors/codes';
import { getException, insertRefundLink, insertResolved, merchantIdByApiInvoice, merchantIdByVault } from './store';
import { refundPayoutId } from './refund-id';
import { ExceptionRow, ExceptionScope } from './types';
import { Keypair } from '@solana/web3.js';
import { signerOfMerchant } from '../payout/signers';

/** What the refund pays (pure): the exception's amount, in the receipt's mint, back to the sender (or `to`). */
export function refundTerms(e: ExceptionRow, to?: string): PayoutInput {
  const mint = e.receipt.mint;
  if (!mint || mint === 'SOL') {
    throw new OncepayError(
      EXCEPTION_CODES.REFUND_UNSUPPORTED,
      `exception ${e.id} is in ${mint ?? 'an unknown mint'}: the payout program refunds SPL tokens only; resolve it instead`,
      { id: e.id },
    );
  }
  return {
    payoutId: refundPayoutId(e.receipt),
    recipient: address(to ?? e.receipt.source, 'refund recipient'),
    mint,
    amount: e.amount,
  };
}

export interface RefundPrepared {
  exception: ExceptionRow;
  payout: PayoutRow;
  /** True when this call created the refund payout (false: an earlier run did; it is finished, not repeated). */
  created: boolean;
}

function notFound(id: string): OncepayError {
  return new OncepayError(EXCEPTION_CODES.NOT_FOUND, `exception ${id} not found`, { id });
}

export interface RefundOptions {
  /**
   * Who pays the refund, and whose exceptions it may touch: its own (the money arrived in its vault, it is about
   * its API invoice, or it refunded it) and those of no registered merchant. Another merchant's exception is not
   * found. Default: the registered merchant whose vault received the money, else the API invoice's merchant.
   */
  merchant?: MerchantRow;
  /** Refund to this token account instead of the sender's. */
  to?: string;
  /**
   * Called with the paying merchant before the refund payout is stored (or an existing one returned): throws when
   * the caller's keys cannot sign that merchant's payouts, so nothing is stored that this caller cannot pay.
   */
  authorize?: (merchant: MerchantRow) => Promise<unknown>;
}

/**
 * Store the refund payout and link it to the exception (once). A second call — concurrent, or after a crash —
 * finds the link and returns the same payout row; with other terms (another `to`) it refuses.
 */
export async function prepareRefund(pool: Pool, id: string, o: RefundOptions = {}): Promise<RefundPrepared> {
  return withTransaction(pool, async (c) => {
    const e = await getException(c, id, { lock: true, merchantId: o.merchant?.id, orUnowned: true });
    if (!e) throw notFound(id);
    if (e.resolution?.kind === 'resolved') {
      throw new OncepayError(
        EXCEPTION_CODES.ALREADY_RESOLVED,
        `exception ${id} was resolved (${e.resolution.note}); it is not refunded`,
        { id },
      );
    }
    if (e.resolution?.kind === 'refund') {
      const payout = (await getPayout(c, e.resolution.payoutRowId!))!;
      await o.authorize?.((await getMerchant(c, payout.merchantId))!);
      if (o.to && address(o.to, 'refund recipient') !== payout.recipientToken) {
        throw new OncepayError(
          EXCEPTION_CODES.REFUND_TERMS_DIFFER,
          `exception ${id} is already refunded to ${payout.recipientToken} (payout ${payout.id}), not ${o.to}`,
          { id, payout: payout.id },
        );
      }
      return { exception: e, payout, created: false };
    }
    const terms = refundTerms(e, o.to);
    const merchant = o.merchant ?? (await merchantForReceipt(c, e));
    await o.authorize?.(merchant);
    const { row, created } = await createPayout(c, merchant, terms);
    if (!created && !sameTerms(row, preparePayout(merchant, terms))) {
      throw new OncepayError(
        EXCEPTION_CODES.REFUND_TERMS_DIFFER,
        `payout ${terms.payoutId} exists with other terms (payout ${row.id})`,
        { id, payout: row.id },
      );
    }
    await insertRefundLink(c, e.id, row.id);
    return { exception: (await getException(c, id))!, payout: row, created };
  });
}

/**
 * Who pays a refund nobody named: the merchant whose vault received the money, else the merchant whose API invoice
 * the exception is about (paid to its receiving wallet; the refund comes out of its vault like any payout).
 */
async function merchantForReceipt(c: PoolClient, e: ExceptionRow): Promise<MerchantRow> {
  const mid = (await merchantIdByVault(c, e.receipt.destination)) ?? (await merchantIdByApiInvoice(c, e.invoiceId));
  const m = mid ? await getMerchant(c, mid) : null;
  if (!m) {
    throw new OncepayError(
      EXCEPTION_CODES.MERCHANT_UNKNOWN,
      `no registered merchant has vault ${e.receipt.destination} (where exception ${e.id}'s money arrived) or its invoice: name the paying merchant with --merchant`,
      { id: e.id },
    );
  }
  return m;
}

export interface RefundResult extends RefundPrepared {
  /** The refund payout after execution (state, proof). */
  executed: PayoutRow;
}

/** prepareRefund, then execute (or finish executing) the refund payout with the payout SDK's rules. */
/**
 * prepareRefund, then execute (or finish executing) the refund payout with the payout SDK's rules, signed by the
 * key among `keys` that is the paying merchant's payout authority (none is: ONCEPAY__PAYOUT__SIGNER_UNAUTHORIZED,
 * before anything is stored).
 */
export async function refundException(
  deps: RunPayoutDeps & { authorities?: readonly Keypair[] },
  id: string,
  o: Omit<RefundOptions, 'authorize'> = {},
): Promise<RefundResult> {
  let authority = deps.authority;
  const keys = deps.authorities ?? [deps.authority];
  const prepared = await prepareRefund(deps.db, id, {
    ...o,
    authorize: async (m) => (authority = await signerOfMerchant(deps.chain, keys, m, `refund of exception ${id}`)),
  });
  failpoint('exception.refund_after_link');
  await runPayout(prepared.payout, { ...deps, authority });
  const executed = (await getPayout(deps.db, prepared.payout.id))!;
  const exception = (await getException(deps.db, id, { merchantId: executed.merchantId }))!;
  return { ...prepared, exception, executed };
}

/**
 * Close an exception without moving money. Idempotent for a resolved one; refused for a refunded one. With a
 * merchant in `scope`, only that merchant's exception (another's is not found).
 */
export async function resolveException(
  pool: Pool,
  id: string,
  note: string,
  scope: ExceptionScope = {},
): Promise<{ exception: ExceptionRow; changed: boolean }> {
  if (!note.trim())
    throw new OncepayError(EXCEPTION_CODES.NOTE_MISSING, 'note: say why (--note)', { field: 'note', flag: '--note' });
  return withTransaction(pool, async (c) => {
    const e = await getException(c, id, { lock: true, ...scope });
    if (!e) throw notFound(id);
    if (e.resolution?.kind === 'refund') {
      throw new OncepayError(
        EXCEPTION_CODES.ALREADY_REFUNDED,
        `exception ${id} has refund payout ${e.resolution.payoutRowId}; it cannot be resolved instead`,
        { id },
      );
    }
    const changed = await insertResolved(c, id, note.trim());
    return { exception: (await getException(c, id))!, changed };
  });
}
