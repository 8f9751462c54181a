// Recovery after a crash: every payout left `executing` (an attempt whose outcome is unknown) — and, on request,
// every `pending` one — goes through runPayout with the same rules. Rows another worker holds are skipped.
import { logger } from '../../common/log';
import { RunPayoutDeps, PayoutResult, runPayout } from './run-payout';
import { listUnfinishedPayouts } from './store';

export interface ResumeSummary {
  results: PayoutResult[];
  /** Held by another live worker at the time: that worker finishes them. */
  skipped: string[];
}

export async function resumePayouts(deps: RunPayoutDeps & { includePending?: boolean }): Promise<ResumeSummary> {
  const log = deps.log ?? logger('payout');
  const rows = await listUnfinishedPayouts(deps.db, { includePending: deps.includePending ?? false });
  const out: ResumeSummary = { results: [], skipped: [] };
  for (const row of rows) {
    const r = await runPayout(row, { ...deps, lock: 'skip' });
    if (r) out.results.push(r);
    else out.skipped.push(row.id);
  }
  log.info({ resumed: out.results.length, skipped: out.skipped.length }, 'resume done');
  return out;
}
