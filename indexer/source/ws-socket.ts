// The websocket itself: opening it (abandoned when the caller stops), reading a frame as text, keeping it alive
// (a ping every pingMs; no message and no pong for idleTimeoutMs ends it) and closing it. No protocol here.
import WebSocket from 'ws';
import { onStop } from './subscription-sink';
import { OncepayError, SOURCE_CODES } from '../../common/errors';

/** A frame's text, whatever shape the `ws` client handed it over in. */
export function textOf(raw: WebSocket.Data): string {
  if (typeof raw === 'string') return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.from(raw as ArrayBuffer).toString('utf8');
}

/** The socket `connect()` opens, once open; rejects when it fails or closes first, or when `signal` aborts. */
export function openSocket(connect: () => WebSocket, signal: AbortSignal): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = connect();
    let unlisten = (): void => undefined;
    const settle = (e?: Error): void => {
      unlisten();
      ws.off('open', onOpen);
      ws.off('error', onError);
      ws.off('close', onClose);
      if (e) reject(e);
      else resolve(ws);
    };
    const onOpen = (): void => settle();
    const onError = (e: Error): void => settle(e);
    const onClose = (code: number): void =>
      settle(new OncepayError(SOURCE_CODES.WS_CLOSED, `websocket closed while connecting (${code})`));
    ws.on('open', onOpen);
    ws.on('error', onError);
    ws.on('close', onClose);
    unlisten = onStop(signal, () => ws.terminate());
  });
}

/** The clock keepAlive runs on (tests give their own). */
export interface KeepAliveClock {
  now(): number;
  /** Runs `fn` every `ms` until the returned stop is called. */
  every(ms: number, fn: () => void): () => void;
}

const REAL_CLOCK: KeepAliveClock = {
  now: () => Date.now(),
  every(ms, fn) {
    const t = setInterval(fn, ms);
    return () => clearInterval(t);
  },
};

/** What keepAlive needs of a socket. */
export type PingableSocket = Pick<WebSocket, 'on' | 'ping' | 'readyState'>;

/**
 * Pings `ws` every `pingMs` while it is open, and calls `idle` once nothing (no message, no pong) was heard for
 * `idleTimeoutMs` (checked every second, or more often for a shorter timeout). Returns the stop.
 */
export function keepAlive(
  ws: PingableSocket,
  o: { pingMs: number; idleTimeoutMs: number },
  idle: (e: Error) => void,
  clock: KeepAliveClock = REAL_CLOCK,
): () => void {
  let lastHeard = clock.now();
  const heard = (): void => {
    lastHeard = clock.now();
  };
  ws.on('message', heard);
  ws.on('pong', heard);
  const stops = [
    clock.every(o.pingMs, () => {
      if (ws.readyState === WebSocket.OPEN) ws.ping();
    }),
    clock.every(Math.min(1000, o.idleTimeoutMs), () => {
      if (clock.now() - lastHeard > o.idleTimeoutMs)
        idle(new OncepayError(SOURCE_CODES.WS_IDLE, 'websocket idle: no message, no pong'));
    }),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/** A graceful close when the socket is open, else it is dropped. */
export function closeSocket(ws: Pick<WebSocket, 'readyState' | 'close' | 'terminate'>): void {
  if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'stopping');
  else ws.terminate();
}
