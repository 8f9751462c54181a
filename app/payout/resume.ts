// Recovery after a crash: every payout left `executing` (an attempt whose outcome is unknown) — and, on request,
// every `pending` one — goes through runPayout with the same rules. Rows another worker holds are skipped, and so
// are the payouts of merchants whose payout authority is none of the keys given (signers.ts): their own worker or
// operator resumes them.
import { Keypair } from '@solana/web3.js';
import { logger } from '../../common/log';
import { RunPayoutDeps, PayoutResult, runPayout } from './run-payout';
import { readSigners } from './signers';
import { listUnfinishedPayouts } from './store';

export interface ResumeSummary {
  results: PayoutResult[];
  /** Held by another live worker at the time: that worker finishes them. */
  skipped: string[];
  /** The merchants (api_merchants ids) whose payouts were looked at: those the keys sign for. */
  merchants: string[];
}

export async function resumePayouts(
  deps: RunPayoutDeps & { includePending?: boolean; authorities?: readonly Keypair[] },
): Promise<ResumeSummary> {
  const log = deps.log ?? logger('payout');
  const signers = await readSigners(deps.db, deps.chain, deps.authorities ?? [deps.authority]);
  const merchants = [...signers.byMerchant.keys()];
  const rows = await listUnfinishedPayouts(deps.db, { includePending: deps.includePending ?? false, merchants });
  const out: ResumeSummary = { results: [], skipped: [], merchants };
  for (const row of rows) {
    const authority = signers.byMerchant.get(row.merchantId)!;
    const r = await runPayout(row, { ...deps, authority, lock: 'skip' });
    if (r) out.results.push(r);
    else out.skipped.push(row.id);
  }
  log.info({ resumed: out.results.length, skipped: out.skipped.length, merchants }, 'resume done');
  return out;
}
