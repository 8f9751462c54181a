// A merchant's failed payouts reopened (back to executing, due now) so that a worker holding its payout authority
// claims them; a new attempt is signed only while the op account is absent (never pays twice).
import { OncepayError } from '../../common/errors';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { Db } from '../../db/sql';
import { MerchantRow } from '../merchant/store';
import { getPayoutOfMerchantById, reopenFailedPayoutsOfMerchant } from './store';

/**
 * Reopen `merchant`'s failed payout `id`, or every failed one of it when `id` is null; the ids reopened. A given id
 * that is not this merchant's failed payout is NOT_FOUND, saying whether it exists (and in which state); `named` is
 * how the caller named the merchant (`--merchant <ref>`).
 */
export async function retryFailedPayouts(
  db: Db,
  merchant: MerchantRow,
  id: string | null,
  named: string,
): Promise<string[]> {
  const reopened = await reopenFailedPayoutsOfMerchant(db, merchant.id, id === null ? null : [id]);
  if (id !== null && reopened.length === 0) {
    const p = await getPayoutOfMerchantById(db, merchant.id, id);
    throw new OncepayError(
      PAYOUT_CODES.NOT_FOUND,
      p ? `payout ${id} is ${p.state}, not failed: nothing to retry` : `payout ${id} not found for --merchant ${named}`,
      { id },
    );
  }
  return reopened.map((p) => p.id);
}
