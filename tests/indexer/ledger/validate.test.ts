// The ledger's pure checks on a batch (indexer/ledger/validate.ts), without a database.
import { expect } from 'chai';
import { compareReceipts, dropRepeats, receiptProblem, uniqueReceipts } from '../../../indexer/ledger/validate';
import type { Receipt } from '../../../indexer/decode/receipt';
import { receipt } from './fixtures';

describe('indexer/ledger validate (pure)', () => {
  it('uniqueReceipts drops repeats of an identity, keeps the first of each, and tells instructions of one transaction apart', () => {
    const r = (signature: string, ixIndex: number, innerIndex: number, amount: bigint) =>
      receipt({ signature, ixIndex, innerIndex, destination: 'D', amount });
    const batch = [
      r('s1', 0, -1, 1n),
      r('s1', 1, -1, 2n),
      r('s1', 1, 0, 3n),
      r('s2', 0, -1, 4n),
      r('s1', 1, -1, 5n), // repeat of (s1, 1, -1)
      r('s1', 0, -1, 6n), // repeat of (s1, 0, -1)
      r('s2', 0, -1, 7n), // repeat of (s2, 0, -1)
      r('s1', 0, 0, 8n),
    ];
    expect(uniqueReceipts(batch).map((x) => x.amount)).to.deep.equal([1n, 2n, 3n, 4n, 8n]);
    expect(uniqueReceipts([])).to.deep.equal([]);
  });

  it('uniqueReceipts keeps, of deliveries of one identity that disagree, the first in chain order (lowest slot, then first delivered)', () => {
    const r = (amount: bigint, slot: bigint | null) =>
      receipt({ signature: 's1', ixIndex: 0, innerIndex: -1, destination: 'D', amount, slot });
    // The later slot delivered first (a source lying about the slot): the one at the lower slot is stored.
    expect(uniqueReceipts([r(1n, 3n), r(2n, 2n), r(3n, 5n)]).map((x) => x.amount)).to.deep.equal([2n]);
    // Equal slots: the first delivered. A receipt without a slot comes after every slot.
    expect(uniqueReceipts([r(1n, 4n), r(2n, 4n)]).map((x) => x.amount)).to.deep.equal([1n]);
    expect(uniqueReceipts([r(1n, null), r(2n, 7n)]).map((x) => x.amount)).to.deep.equal([2n]);
    // Each other identity keeps its place in the batch.
    const other = receipt({ signature: 's2', destination: 'D', amount: 9n, slot: 1n });
    expect(uniqueReceipts([r(1n, 3n), other, r(2n, 2n)]).map((x) => x.amount)).to.deep.equal([2n, 9n]);
  });

  it('dropRepeats keeps the first delivery of each identity once a batch is in chain order (a stable sort)', () => {
    const r = (signature: string, ixIndex: number, innerIndex: number, amount: bigint, slot = 10n) =>
      receipt({ signature, ixIndex, innerIndex, destination: 'D', amount, slot });
    const delivered = [
      r('s2', 0, -1, 1n),
      r('s1', 1, -1, 2n),
      r('s1', 0, -1, 3n),
      r('s2', 0, -1, 4n), // repeat of (s2, 0, -1)
      r('s1', 1, -1, 5n), // repeat of (s1, 1, -1)
      r('s1', 1, -1, 6n), // and again
      r('s1', 1, 0, 7n),
      r('s3', 0, -1, 8n, 9n),
    ];
    // The ledger's chain order: slot, then identity; Array.prototype.sort is stable.
    const chain = [...delivered].sort((a, b) => Number(a.slot! - b.slot!) || compareReceipts(a, b));
    expect(dropRepeats(chain).map((x) => x.amount)).to.deep.equal([8n, 3n, 2n, 7n, 1n]);
    // The same set as uniqueReceipts keeps, each first delivery.
    const amounts = (xs: { amount: bigint }[]) => xs.map((x) => String(x.amount)).sort();
    expect(amounts(dropRepeats(chain))).to.deep.equal(amounts(uniqueReceipts(delivered)));
    expect(dropRepeats([])).to.deep.equal([]);
  });

  it('receiptProblem: a receipt is storable only when every column can hold its value (the largest ones accepted)', () => {
    const r = receipt({ signature: 's', destination: 'D', amount: 1n });
    const problem = (x: Partial<Record<keyof Receipt, unknown>>) => receiptProblem({ ...r, ...x } as Receipt);
    expect(problem({ ixIndex: 2 ** 31 - 1, innerIndex: 2 ** 31 - 1, slot: (1n << 63n) - 1n, blockTime: -1 })).to.equal(
      null,
    );
    expect(problem({ signature: 'x'.repeat(256), references: [], accountKeys: ['K'] })).to.equal(null);
    for (const bad of [
      { ixIndex: 2 ** 31 },
      { innerIndex: 2 ** 31 },
      { slot: 1n << 63n },
      { blockTime: 1.5 },
      { blockTime: '1' },
      { signature: 'x'.repeat(257) },
      { signature: 's\u0000' },
      { mint: 'm\u0000' },
      { destinationOwner: 'o\u0000' },
      { references: 'K' },
      { accountKeys: [1] },
    ])
      expect(problem(bad), Object.keys(bad).join()).to.be.a('string');
  });
});
