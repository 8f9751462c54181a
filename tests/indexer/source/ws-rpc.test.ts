// JSON-RPC over the socket and the subscription set (indexer/source/ws-rpc.ts, ws-subscriptions.ts), without a
// socket: requests are what `send` was given, answers are handed in as the session reads them.
import { expect } from 'chai';
import { isOncepayError, SOURCE_CODES } from '../../../common/errors';
import { createSocketRpc, isAnswer } from '../../../indexer/source/ws-rpc';
import { createSubscriptionSet } from '../../../indexer/source/ws-subscriptions';
import { parseWsMessage } from '../../../indexer/source/ws-plan';
import { rejection } from '../ledger/fixtures';

/** An rpc whose sent requests are kept, parsed. */
function recorded() {
  const sent: Array<{ id: number; method: string; params?: unknown[] }> = [];
  const rpc = createSocketRpc((text) => sent.push(JSON.parse(text)));
  return { sent, rpc };
}

describe('indexer/source ws rpc (pure)', () => {
  it('numbers its requests, resolves each with its own answer, and ignores an answer to nothing in flight', async () => {
    const { sent, rpc } = recorded();
    const a = rpc.request((id) => JSON.stringify({ id, method: 'a', params: [] }));
    const b = rpc.request((id) => JSON.stringify({ id, method: 'b', params: [] }));
    expect(sent.map((s) => [s.id, s.method])).to.deep.equal([
      [1, 'a'],
      [2, 'b'],
    ]);
    rpc.answer({ kind: 'result', id: 2, result: 'B' });
    rpc.answer({ kind: 'result', id: 99, result: 'nobody' });
    rpc.answer({ kind: 'result', id: 1, result: 'A' });
    rpc.answer({ kind: 'result', id: 1, result: 'again' }); // answered already
    expect([await a, await b]).to.deep.equal(['A', 'B']);
  });

  it('a refusal rejects with WS_REQUEST_REFUSED and the node code; close() rejects what is still in flight', async () => {
    const { rpc } = recorded();
    const refused = rpc.request((id) => JSON.stringify({ id, method: 'slotSubscribe', params: [] }));
    const open = rpc.request((id) => JSON.stringify({ id, method: 'x', params: [] }));
    rpc.answer({ kind: 'error', id: 1, code: -32601, message: 'Method not found' });
    const e = await rejection<unknown>(refused);
    expect(isOncepayError(e, SOURCE_CODES.WS_REQUEST_REFUSED)).to.equal(true);
    expect((e as { context: { rpcCode?: number } }).context.rpcCode).to.equal(-32601);
    rpc.close(new Error('session ended'));
    expect((await rejection<Error>(open)).message).to.equal('session ended');
  });

  it('accept sees the result as the answer is read, before the promise settles, and may refuse it', async () => {
    const { rpc } = recorded();
    const seen: unknown[] = [];
    const ok = rpc.request(
      (id) => JSON.stringify({ id }),
      (r) => seen.push(r),
    );
    rpc.answer({ kind: 'result', id: 1, result: 7 });
    expect(seen).to.deep.equal([7]); // synchronously
    expect(await ok).to.equal(7);
    const no = rpc.request(
      (id) => JSON.stringify({ id }),
      () => {
        throw new Error('not an id');
      },
    );
    rpc.answer({ kind: 'result', id: 2, result: 'x' });
    expect((await rejection<Error>(no)).message).to.equal('not an id');
  });

  it('tells answers from notifications and from errors that name no request', () => {
    expect(isAnswer(parseWsMessage('{"jsonrpc":"2.0","result":5,"id":3}'))).to.equal(true);
    expect(isAnswer(parseWsMessage('{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":3}'))).to.equal(true);
    expect(isAnswer(parseWsMessage('{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":null}'))).to.equal(false);
    expect(
      isAnswer(
        parseWsMessage('{"jsonrpc":"2.0","method":"slotNotification","params":{"subscription":1,"result":{"slot":2}}}'),
      ),
    ).to.equal(false);
  });
});

describe('indexer/source ws subscription set (pure)', () => {
  it('subscribes an address at each commitment and maps each subscription id back as its answer is read', async () => {
    const { sent, rpc } = recorded();
    const counts: number[] = [];
    const set = createSubscriptionSet(rpc, ['finalized', 'confirmed'], (n) => counts.push(n));
    const subscribing = set.subscribe('ADDR');
    expect(sent.map((s) => [s.method, s.params])).to.deep.equal([
      ['logsSubscribe', [{ mentions: ['ADDR'] }, { commitment: 'finalized' }]],
      ['logsSubscribe', [{ mentions: ['ADDR'] }, { commitment: 'confirmed' }]],
    ]);
    rpc.answer({ kind: 'result', id: 1, result: 501 });
    expect(set.commitmentOf(501)).to.equal('finalized'); // known at once: the next frame may notify it
    expect(set.has('ADDR')).to.equal(false); // not until every commitment answered
    rpc.answer({ kind: 'result', id: 2, result: 502 });
    await subscribing;
    expect(set.commitmentOf(502)).to.equal('confirmed');
    expect(set.has('ADDR')).to.equal(true);
    expect(counts).to.deep.equal([1]);
  });

  it('refuses an answer that is not a subscription id; an address dropped is forgotten before it is unsubscribed', async () => {
    const { sent, rpc } = recorded();
    const set = createSubscriptionSet(rpc, ['finalized']);
    const bad = set.subscribe('BAD');
    rpc.answer({ kind: 'result', id: 1, result: { not: 'an id' } });
    expect((await rejection<Error>(bad)).message).to.equal(
      'ONCEPAY__RPC__MALFORMED_RESPONSE: logsSubscribe answered {"not":"an id"}, not a subscription id',
    );
    const good = set.subscribe('A');
    rpc.answer({ kind: 'result', id: 2, result: 9 });
    await good;
    const dropping = set.unsubscribe('A');
    expect(set.commitmentOf(9)).to.equal(undefined); // its notifications are no longer taken
    expect(set.has('A')).to.equal(false);
    expect(sent[2]).to.deep.include({ method: 'logsUnsubscribe', params: [9] });
    rpc.answer({ kind: 'result', id: 3, result: true });
    await dropping;
  });
});
