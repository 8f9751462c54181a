// The websocket source's pure parts: the messages it sends and reads, the catch-up's paging, the watched-set diff.
import { expect } from 'chai';
import {
  catchUpFrom,
  catchUpPage,
  diffWatched,
  logsSubscribeRequest,
  logsUnsubscribeRequest,
  parseWsMessage,
  slotSubscribeRequest,
  rpcUrlOfWs,
} from '../../../indexer/source/ws-plan';
import { pickSubscription } from '../../../indexer/source/stream-options';

describe('indexer/source ws-plan (pure)', () => {
  it('subscribes one address per logsSubscribe, at the asked commitment', () => {
    expect(JSON.parse(logsSubscribeRequest(7, 'Addr1', 'confirmed'))).to.deep.equal({
      jsonrpc: '2.0',
      id: 7,
      method: 'logsSubscribe',
      params: [{ mentions: ['Addr1'] }, { commitment: 'confirmed' }],
    });
    expect(JSON.parse(slotSubscribeRequest(9))).to.deep.equal({ jsonrpc: '2.0', id: 9, method: 'slotSubscribe' });
    expect(JSON.parse(logsUnsubscribeRequest(8, 42))).to.deep.equal({
      jsonrpc: '2.0',
      id: 8,
      method: 'logsUnsubscribe',
      params: [42],
    });
  });

  it("reads a node's logsNotification (web3.js onLogs shape), answers, errors and anything else", () => {
    const note = (err: unknown, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'logsNotification',
        params: {
          result: {
            context: { slot: 5208469, ...extra },
            value: { signature: 'Sig1', err, logs: ['Program x invoke [1]'] },
          },
          subscription: 24040,
        },
      });
    expect(parseWsMessage(note(null))).to.deep.equal({
      kind: 'logs',
      subscription: 24040,
      slot: 5208469,
      signature: 'Sig1',
      failed: false,
    });
    // localnet adds context.apiVersion; a failed transaction is flagged (nothing to credit).
    expect(parseWsMessage(note({ InstructionError: [0, 'Custom'] }, { apiVersion: '3.1.4' }))).to.include({
      kind: 'logs',
      failed: true,
    });
    expect(parseWsMessage('{"jsonrpc":"2.0","result":3,"id":1}')).to.deep.equal({ kind: 'result', id: 1, result: 3 });
    expect(parseWsMessage('{"jsonrpc":"2.0","result":true,"id":2}')).to.deep.equal({
      kind: 'result',
      id: 2,
      result: true,
    });
    expect(parseWsMessage('{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":4}')).to.deep.equal(
      { kind: 'error', id: 4, code: -32602, message: 'Invalid params' },
    );
    // A node's slotNotification (as solana-test-validator 3.1.4 sends it); one without its slot is malformed.
    expect(
      parseWsMessage(
        '{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":74,"root":43,"slot":75},"subscription":0}}',
      ),
    ).to.deep.equal({ kind: 'slot', subscription: 0, slot: 75 });
    expect(parseWsMessage('{"jsonrpc":"2.0","method":"slotNotification","params":{}}').kind).to.equal('malformed');
    expect(parseWsMessage('{"jsonrpc":"2.0","method":"rootNotification","params":{"result":4}}')).to.deep.equal({
      kind: 'other',
      method: 'rootNotification',
    });
    expect(parseWsMessage('nope').kind).to.equal('malformed');
    expect(parseWsMessage('[1]').kind).to.equal('malformed');
    expect(parseWsMessage('{"method":"logsNotification","params":{"result":{"context":{},"value":{}}}}').kind).to.equal(
      'malformed',
    );
    // A slot beyond 2^53 or negative is not a slot.
    expect(parseWsMessage(note(null, { slot: -1 })).kind).to.equal('malformed');
  });

  it('pages getSignaturesForAddress back to the first slot, reading only succeeded transactions', () => {
    const page = [
      { signature: 'a', slot: 120, err: null },
      { signature: 'b', slot: 110, err: { InstructionError: [0, 'x'] } },
      { signature: 'c', slot: 100, err: null },
    ];
    // A full page entirely at or above `from`: read it and ask for the page before its oldest signature.
    expect(catchUpPage(page, 100, 3)).to.deep.equal({
      read: [
        { signature: 'a', slot: 120 },
        { signature: 'c', slot: 100 },
      ],
      before: 'c',
    });
    // The page reaches below `from`: done.
    expect(catchUpPage(page, 101, 3)).to.deep.equal({ read: [{ signature: 'a', slot: 120 }], before: null });
    // A short page is the last one.
    expect(catchUpPage(page, 0, 1000).before).to.equal(null);
    expect(catchUpPage([], 0, 1000)).to.deep.equal({ read: [], before: null });
  });

  it('catches up from a margin below the checkpoint, else --from-slot, else not at all', () => {
    expect(catchUpFrom(1000, 5, 150)).to.equal(850);
    expect(catchUpFrom(100, undefined, 150)).to.equal(0);
    expect(catchUpFrom(null, 42, 150)).to.equal(42);
    expect(catchUpFrom(null, undefined, 150)).to.equal(null);
  });

  it('subscribes what is new and drops what is gone', () => {
    expect(diffWatched(['a', 'b', 'c'], ['c', 'd', 'b', 'd'])).to.deep.equal({ subscribe: ['d'], unsubscribe: ['a'] });
    expect(diffWatched([], [])).to.deep.equal({ subscribe: [], unsubscribe: [] });
  });

  it('asks getTransaction beside the websocket: ws → http, wss → https, same host and port', () => {
    expect(rpcUrlOfWs('ws://127.0.0.1:8900')).to.equal('http://127.0.0.1:8900/');
    expect(rpcUrlOfWs('wss://rpc.example.com/key/abc')).to.equal('https://rpc.example.com/key/abc');
    expect(() => rpcUrlOfWs('http://127.0.0.1:8899')).to.throw(/ONCEPAY__SOURCE__INVALID_OPTION|ws:\/\//);
  });

  it('`indexer stream` runs one source: --grpc or --ws, an explicit --ws before ONCEPAY_GRPC_URL', () => {
    expect(pickSubscription({ grpc: 'http://g' }, false)).to.equal('grpc');
    expect(pickSubscription({ ws: 'ws://w' }, false)).to.equal('ws');
    expect(pickSubscription({ grpc: 'http://g', ws: 'ws://w' }, true)).to.equal('ws');
    expect(() => pickSubscription({ grpc: 'http://g', ws: 'ws://w' }, false)).to.throw(/two sources/);
    expect(() => pickSubscription({}, false)).to.throw(/one of --grpc <url> or --ws <url>/);
  });
});
