// Chain order (indexer/ledger/chain-order.ts), without a database: slot, then identity, no slot last.
import { expect } from 'chai';
import { chainOrder } from '../../../indexer/ledger/chain-order';
import type { Receipt } from '../../../indexer/decode/receipt';
import { receipt } from './fixtures';

const r = (signature: string, slot: bigint | null, ixIndex = 0, amount = 1n): Receipt =>
  receipt({ signature, slot, ixIndex, destination: 'D', amount });

describe('indexer/ledger chain order (pure)', () => {
  it('orders by slot, then signature and instruction, with receipts without a slot last', () => {
    const batch = [r('b', 20n), r('a', null), r('c', 10n, 1), r('c', 10n, 0), r('a', 20n)];
    const names = chainOrder(batch).map((x) => `${x.signature}${x.ixIndex}@${x.slot ?? '-'}`);
    expect(names).to.deep.equal(['c0@10', 'c1@10', 'a0@20', 'b0@20', 'a0@-']);
  });

  it('keeps deliveries of one identity in the order given (dropRepeats keeps the first)', () => {
    const first = r('s', 5n, 0, 1n);
    const second = r('s', 5n, 0, 2n);
    expect(chainOrder([first, r('t', 4n), second]).map((x) => x.amount)).to.deep.equal([1n, 1n, 2n]);
    expect(chainOrder([second, first])[0]).to.equal(second);
  });

  it('compares slots beyond 2^53 exactly (as bigints), where their numbers would be equal', () => {
    const big = 1n << 60n;
    const batch = [r('a', big + 1n), r('b', big), r('c', 7n)];
    expect(Number(big + 1n)).to.equal(Number(big));
    expect(chainOrder(batch).map((x) => x.signature)).to.deep.equal(['c', 'b', 'a']);
  });

  it('leaves the batch given as it was', () => {
    const batch = [r('b', 2n), r('a', 1n)];
    chainOrder(batch);
    expect(batch.map((x) => x.signature)).to.deep.equal(['b', 'a']);
  });
});
