// JSON-RPC over the socket (pure: it sends through the function it is given): each request gets the next id, and
// its answer — read by the session, handed to `answer` — settles it. A refused request rejects with
// WS_REQUEST_REFUSED; `accept` sees a result first, synchronously as the answer is read (a subscription id must be
// known before the next frame, which may already notify it), and may refuse it by throwing.
import { OncepayError, SOURCE_CODES } from '../../common/errors';
import type { WsMessage } from './ws-plan';

/** The answers of a request: a result, or an error naming the request. */
export type WsAnswer =
  Extract<WsMessage, { kind: 'result' }> | (Extract<WsMessage, { kind: 'error' }> & { id: number });

export interface SocketRpc {
  /** Sends `build(id)`; resolves with the result (`accept`ed), rejects with the refusal or the session's end. */
  request(build: (id: number) => string, accept?: (result: unknown) => void): Promise<unknown>;
  /** An answer read from the socket (one to no request in flight is ignored). */
  answer(m: WsAnswer): void;
  /** Every request still in flight rejects with `reason`. */
  close(reason: Error): void;
}

/** Whether a message is an answer to a request (not a notification, nor an error naming no request). */
export function isAnswer(m: WsMessage): m is WsAnswer {
  return m.kind === 'result' || (m.kind === 'error' && m.id !== null);
}

export function createSocketRpc(
  send: (text: string) => void,
  guard: <T>(p: Promise<T>) => Promise<T> = (p) => p,
): SocketRpc {
  let nextId = 1;
  const waiting = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; accept?: (result: unknown) => void }
  >();
  return {
    request(build, accept) {
      const id = nextId++;
      const answer = new Promise<unknown>((resolve, reject) => waiting.set(id, { resolve, reject, accept }));
      send(build(id));
      return guard(answer);
    },
    answer(m) {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (w === undefined) return;
      if (m.kind === 'error') {
        w.reject(
          new OncepayError(
            SOURCE_CODES.WS_REQUEST_REFUSED,
            `websocket request ${m.id} refused: ${m.code ?? ''} ${m.message}`,
            {
              rpcCode: m.code,
            },
          ),
        );
        return;
      }
      try {
        w.accept?.(m.result);
      } catch (e) {
        w.reject(e as Error);
        return;
      }
      w.resolve(m.result);
    },
    close(reason) {
      for (const w of waiting.values()) w.reject(reason);
    },
  };
}
