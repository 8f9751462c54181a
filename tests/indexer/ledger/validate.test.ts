// The ledger's pure checks on a batch (indexer/ledger/validate.ts), without a database.
import { expect } from 'chai';
import { uniqueReceipts } from '../../../indexer/ledger/validate';
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
});
