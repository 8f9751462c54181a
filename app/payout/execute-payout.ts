// One payout run by its row id, as `oncepay payout execute` asks: signed with the key among those given that is its
// merchant's payout authority on chain (SIGNER_UNAUTHORIZED, nothing signed, when none is); a final payout needs no
// signer and is reported as it is.
import { Keypair } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { PayoutResult, RunPayoutDeps, runPayout } from './run-payout';
import { signerOfMerchant } from './signers';
import { getMerchant } from '../merchant/store';
import { FINAL_STATES, getPayout } from './store';

/** Run payout `id` (or finish running it); NOT_FOUND when there is no such row. */
export async function executePayout(
  id: string,
  deps: RunPayoutDeps & { authorities: readonly Keypair[] },
): Promise<PayoutResult | null> {
  const p = await getPayout(deps.db, id);
  if (!p) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`);
  const finalNow = FINAL_STATES.includes(p.state) && !(deps.retryFailed && p.state === 'failed');
  const m = finalNow ? undefined : await getMerchant(deps.db, p.merchantId);
  const authority = m ? await signerOfMerchant(deps.chain, deps.authorities, m, `payout ${id}`) : deps.authority;
  return runPayout(p, { ...deps, authority });
}
