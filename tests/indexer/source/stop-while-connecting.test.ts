// A stop (SIGTERM's abort) that lands while a subscription source is still setting up a session: its abort event has
// fired before the session listened for it, so the session must look at the signal itself, or it runs on (a gRPC
// stream or a socket nobody closes) until the process's drain bound kills it. Pure: fake client and socket.
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type WebSocket from 'ws';
import { createStreamSource } from '../../../indexer/source/stream';
import { createWsSource } from '../../../indexer/source/ws-source';
import type { LedgerPort } from '../../../indexer/source/ports';

const ledger: LedgerPort = {
  applyBatch: async () => {
    throw new Error('nothing is applied in these cases');
  },
  getCheckpoint: async () => null,
};

/** 'ended' if `run` resolves within 3 s, else 'still running'. */
function within3s(run: Promise<unknown>): Promise<string> {
  return Promise.race([
    run.then(() => 'ended'),
    new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 3_000).unref()),
  ]);
}

describe('indexer/source: a stop while a session connects', () => {
  it('stream: stopped between reading the checkpoint and subscribing, the new stream is ended at once', async () => {
    const ac = new AbortController();
    let subscribed = false;
    const source = createStreamSource(
      {
        ledger,
        // The stop lands while the session reads the watched addresses (before it listens for the abort).
        watched: async () => {
          ac.abort();
          return ['Watched1111111111111111111111111111111111111'];
        },
        client: () => ({
          connect: async () => undefined,
          subscribeReplayInfo: async () => ({}),
          subscribe: async () => {
            subscribed = true;
            return new PassThrough({ objectMode: true });
          },
        }),
      },
      { cluster: 'localnet' },
    );
    expect(await within3s(source.run({ signal: ac.signal }))).to.equal('ended');
    expect(subscribed, 'the session got as far as its stream').to.equal(true);
  });

  it('websocket: stopped while reading the checkpoint, the socket asked for next is closed at once', async () => {
    const ac = new AbortController();
    let terminated = false;
    const socket = Object.assign(new EventEmitter(), {
      terminate() {
        terminated = true;
        setImmediate(() => socket.emit('close', 1006));
      },
    });
    const source = createWsSource(
      {
        ledger: {
          ...ledger,
          getCheckpoint: async () => {
            ac.abort();
            return null;
          },
        },
        watched: async () => [],
        url: 'ws://127.0.0.1:9',
        // A socket that never opens by itself: only the stop can end the wait for it.
        connect: () => socket as unknown as WebSocket,
        rpc: {} as never,
      },
      { cluster: 'localnet' },
    );
    expect(await within3s(source.run({ signal: ac.signal }))).to.equal('ended');
    expect(terminated).to.equal(true);
  });
});
