import { expect } from 'chai';
import { mapLimit } from '../../../indexer/source/webhook-check';
import {
  addSummary,
  EMPTY_SUMMARY,
  type HintResult,
  splitResults,
  waiterOutcome,
} from '../../../indexer/source/webhook-check-summary';
import type { ClaimedHint } from '../../../indexer/source/webhook-store';

const hint = (id: string): ClaimedHint => ({
  id,
  signature: `sig-${id}`,
  provider: 'helius',
  eventId: null,
  claimed: null,
  checks: 1,
  expired: true,
  rank: 1,
});

describe('indexer/source webhook check summary (pure)', () => {
  it('adds a partial summary field by field, leaving the others', () => {
    const sum = { ...EMPTY_SUMMARY, checked: 3, credited: 1 };
    addSummary(sum, { credited: 1, receipts: 2, inserted: 1, duplicates: 1 });
    addSummary(sum, { dropped: 1 });
    expect(sum).to.deep.equal({
      checked: 3,
      credited: 2,
      dropped: 1,
      pending: 0,
      receipts: 2,
      inserted: 1,
      duplicates: 1,
    });
    expect(EMPTY_SUMMARY.credited).to.equal(0);
  });

  it("gives a waiting delivery each hint's outcome: rescheduled is pending, expired is dropped, settled as settled", () => {
    expect(waiterOutcome({ later: { id: '1', delayMs: 5, lastError: 'x' } })).to.deep.equal({ pending: 1 });
    expect(waiterOutcome({ later: { expired: hint('2'), reason: 'not_found' } })).to.deep.equal({ dropped: 1 });
    expect(waiterOutcome({ credited: 1, receipts: 2 })).to.deep.equal({ credited: 1, receipts: 2 });
  });

  it('splits results into settled, rescheduled and expired, each in order', () => {
    const results: HintResult[] = [
      { later: { id: 'a', delayMs: 1, lastError: 'e1' } },
      { credited: 1, receipts: 1 },
      { later: { expired: hint('b'), reason: 'rpc_error' } },
      { dropped: 1 },
      { later: { id: 'c', delayMs: 2, lastError: 'e2' } },
      { later: { expired: hint('d'), reason: 'not_found' } },
    ];
    const { settled, recheck, expired } = splitResults(results);
    expect(settled).to.deep.equal([{ credited: 1, receipts: 1 }, { dropped: 1 }]);
    expect(recheck.map((r) => r.id)).to.deep.equal(['a', 'c']);
    expect(expired.map((x) => [x.expired.id, x.reason])).to.deep.equal([
      ['b', 'rpc_error'],
      ['d', 'not_found'],
    ]);
  });

  it('maps with at most `limit` calls in flight, results in input order', async () => {
    let inFlight = 0;
    let most = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x) => {
      inFlight++;
      most = Math.max(most, inFlight);
      for (let i = 0; i < x; i++) await Promise.resolve();
      inFlight--;
      return x * 10;
    });
    expect(out).to.deep.equal([50, 10, 40, 20, 30]);
    expect(most).to.equal(2);
    expect(await mapLimit([], 3, async (x: number) => x)).to.deep.equal([]);
  });

  it('mapLimit: after a failure starts nothing new and rejects with it only once the calls in flight have ended', async () => {
    const started: number[] = [];
    const ended: number[] = [];
    const run = mapLimit([1, 2, 3, 4, 5], 2, async (x) => {
      started.push(x);
      if (x === 1) throw new Error('lane failed');
      for (let i = 0; i < 20; i++) await Promise.resolve(); // x = 2 still in flight when 1 fails
      ended.push(x);
      return x;
    });
    let message = '';
    await run.catch((e: Error) => (message = e.message));
    expect(message).to.equal('lane failed');
    expect(started).to.deep.equal([1, 2]);
    expect(ended).to.deep.equal([2]); // the call in flight ended before the rejection
  });
});
