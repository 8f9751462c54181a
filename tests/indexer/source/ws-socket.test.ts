// The websocket itself (indexer/source/ws-socket.ts), without a network: a frame's text, opening (and giving up on
// a stop), the keep-alive on a scripted clock, and closing.
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { closeSocket, keepAlive, openSocket, textOf } from '../../../indexer/source/ws-socket';

/** A socket stand-in: events, a readyState, and what was called on it. */
function fakeSocket(readyState: number = WebSocket.CONNECTING) {
  const calls: string[] = [];
  const ws = Object.assign(new EventEmitter(), {
    readyState,
    ping: () => calls.push('ping'),
    terminate: () => calls.push('terminate'),
    close: (code: number, reason: string) => calls.push(`close ${code} ${reason}`),
  });
  return { ws, calls, socket: ws as unknown as WebSocket };
}

/** A clock moved by hand: `advance(ms)` runs every interval due. */
function manualClock() {
  let now = 0;
  const timers: Array<{ ms: number; next: number; fn: () => void; stopped: boolean }> = [];
  return {
    now: () => now,
    every(ms: number, fn: () => void) {
      const t = { ms, next: now + ms, fn, stopped: false };
      timers.push(t);
      return () => (t.stopped = true);
    },
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = timers.filter((t) => !t.stopped && t.next <= end).sort((a, b) => a.next - b.next)[0];
        if (!due) break;
        now = due.next;
        due.next += due.ms;
        due.fn();
      }
      now = end;
    },
  };
}

describe('indexer/source ws socket (no network)', () => {
  it('reads a frame as text whatever shape it came in', () => {
    expect(textOf('abc')).to.equal('abc');
    expect(textOf(Buffer.from('abc'))).to.equal('abc');
    expect(textOf([Buffer.from('a'), Buffer.from('bc')])).to.equal('abc');
    expect(textOf(new Uint8Array(Buffer.from('abc')).buffer)).to.equal('abc');
  });

  it('opens: resolves on open, rejects on a close or an error first, and drops the socket on a stop', async () => {
    const opened = fakeSocket();
    const opening = openSocket(() => opened.socket, new AbortController().signal);
    opened.ws.emit('open');
    expect(await opening).to.equal(opened.socket);
    expect(opened.ws.listenerCount('open') + opened.ws.listenerCount('close')).to.equal(0); // its listeners gone

    const closed = fakeSocket();
    const refused = openSocket(() => closed.socket, new AbortController().signal).catch((e: Error) => e.message);
    closed.ws.emit('close', 1006);
    expect(await refused).to.equal('ONCEPAY__SOURCE__WS_CLOSED: websocket closed while connecting (1006)');

    const stop = new AbortController();
    const stopped = fakeSocket();
    const abandoned = openSocket(() => stopped.socket, stop.signal).catch((e: Error) => e.message);
    stop.abort();
    expect(stopped.calls).to.deep.equal(['terminate']);
    stopped.ws.emit('close', 1006); // what terminate() leads to
    expect(await abandoned).to.equal('ONCEPAY__SOURCE__WS_CLOSED: websocket closed while connecting (1006)');
  });

  it('pings an open socket every pingMs, and calls it idle once nothing was heard for idleTimeoutMs', () => {
    const { ws, calls, socket } = fakeSocket(WebSocket.OPEN);
    const clock = manualClock();
    const idle: string[] = [];
    const stop = keepAlive(socket, { pingMs: 10_000, idleTimeoutMs: 35_000 }, (e) => idle.push(e.message), clock);
    clock.advance(30_000);
    expect(calls.filter((c) => c === 'ping').length).to.equal(3);
    ws.emit('pong'); // heard at 30 s
    clock.advance(30_000);
    expect(idle).to.deep.equal([]);
    ws.emit('message', 'x'); // heard at 60 s
    clock.advance(35_000);
    expect(idle).to.deep.equal([]);
    clock.advance(1_000); // 36 s of silence
    expect(idle[0]).to.equal('ONCEPAY__SOURCE__WS_IDLE: websocket idle: no message, no pong');
    stop();
    const pings = calls.length;
    clock.advance(100_000);
    expect(calls.length).to.equal(pings); // stopped: no ping, no check
  });

  it('does not ping a socket that is not open; closes an open socket gracefully, else drops it', () => {
    const connecting = fakeSocket(WebSocket.CONNECTING);
    const clock = manualClock();
    keepAlive(connecting.socket, { pingMs: 10, idleTimeoutMs: 1_000_000 }, () => undefined, clock);
    clock.advance(100);
    expect(connecting.calls).to.deep.equal([]);
    const open = fakeSocket(WebSocket.OPEN);
    closeSocket(open.socket);
    expect(open.calls).to.deep.equal(['close 1000 stopping']);
    closeSocket(connecting.socket);
    expect(connecting.calls).to.deep.equal(['terminate']);
  });
});
