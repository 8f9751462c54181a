import { expect } from 'chai';
import {
  blockAnswer,
  blockFailure,
  slotAnswer,
  slotsAnswer,
  statusesAnswer,
  statusOf,
  transactionAnswer,
} from '../../../indexer/rpc/answers';
import { RpcCallError } from '../../../indexer/rpc/call-error';
import { RPC_CODES } from '../../../common/errors/codes';

function malformedOf(f: () => unknown): RpcCallError {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(RpcCallError);
    expect((e as RpcCallError).code).to.equal(RPC_CODES.MALFORMED_RESPONSE);
    expect((e as RpcCallError).kind).to.equal('malformed');
    return e as RpcCallError;
  }
  throw new Error('expected a malformed answer');
}

describe('indexer/rpc answers (pure)', () => {
  it('a slot is a safe non-negative integer', () => {
    expect(slotAnswer(42)).to.equal(42);
    expect(slotAnswer(0)).to.equal(0);
    for (const bad of [-1, 1.5, '42', null, 2 ** 53]) malformedOf(() => slotAnswer(bad));
  });

  it('getBlocks: slots within the range, sorted ascending', () => {
    expect(slotsAnswer([7, 5, 6], 5, 7)).to.deep.equal([5, 6, 7]);
    expect(slotsAnswer([], 5, 7)).to.deep.equal([]);
    malformedOf(() => slotsAnswer([4, 5], 5, 7));
    malformedOf(() => slotsAnswer([8], 5, 7));
    malformedOf(() => slotsAnswer({ 0: 5 }, 5, 7));
  });

  it('getBlock: a block object is ok, null is not available; skipped and not-available failures are outcomes', () => {
    expect(blockAnswer(9, { blockhash: 'x' })).to.deep.equal({ status: 'ok', slot: 9, block: { blockhash: 'x' } });
    expect(blockAnswer(9, null)).to.deep.include({ status: 'not_available', slot: 9, rpcCode: null });
    const skipped = new RpcCallError(RPC_CODES.ERROR_RESPONSE, 'slot_skipped', 'skipped', { rpcCode: -32007 });
    expect(blockFailure(9, skipped)).to.deep.equal({ status: 'skipped', slot: 9, rpcCode: -32007 });
    const gone = new RpcCallError(RPC_CODES.ERROR_RESPONSE, 'block_not_available', 'not there', { rpcCode: -32004 });
    expect(blockFailure(9, gone)).to.deep.equal({
      status: 'not_available',
      slot: 9,
      rpcCode: -32004,
      message: gone.message,
    });
    expect(blockFailure(9, new RpcCallError(RPC_CODES.TIMEOUT, 'timeout', 't'))).to.equal(null);
    expect(blockFailure(9, new Error('x'))).to.equal(null);
  });

  it('getTransaction: an object or null; anything else is malformed', () => {
    expect(transactionAnswer('s', null)).to.equal(null);
    expect(transactionAnswer('s', { slot: 1 })).to.deep.equal({ slot: 1 });
    malformedOf(() => transactionAnswer('s', []));
    expect(malformedOf(() => transactionAnswer('s', 'tx')).message).to.include('getTransaction(s)');
  });

  it('a status: its level, or finalized when the field is missing and confirmations is null', () => {
    expect(statusOf(null)).to.equal(null);
    expect(statusOf({ slot: 3, err: null, confirmationStatus: 'confirmed' })).to.deep.equal({
      slot: 3,
      err: null,
      confirmationStatus: 'confirmed',
    });
    expect(statusOf({ slot: 3, confirmations: null })).to.deep.include({ confirmationStatus: 'finalized', err: null });
    expect(statusOf({ slot: 3, confirmations: 2 })).to.deep.include({ confirmationStatus: 'processed' });
    expect(statusOf({ slot: 3, err: { InstructionError: [0, 'x'] }, confirmationStatus: 'finalized' })).to.deep.include(
      {
        err: { InstructionError: [0, 'x'] },
      },
    );
    expect(statusOf({ slot: 3, confirmationStatus: 'rooted' })).to.equal(undefined);
    expect(statusOf({ slot: -1, confirmationStatus: 'finalized' })).to.equal(undefined);
    expect(statusOf([1])).to.equal(undefined);
  });

  it('getSignatureStatuses: one status or null per signature asked, else malformed', () => {
    const ok = { value: [null, { slot: 1, confirmationStatus: 'finalized' }] };
    expect(statusesAnswer(ok, 2)).to.deep.equal([null, { slot: 1, err: null, confirmationStatus: 'finalized' }]);
    malformedOf(() => statusesAnswer(ok, 3));
    malformedOf(() => statusesAnswer({ value: [null, { slot: 'x' }] }, 2));
    malformedOf(() => statusesAnswer(null, 0));
  });
});
