// One websocket session of the subscription source, composed of its units: the socket (ws-socket.ts), JSON-RPC
// over it (ws-rpc.ts), the subscription set (ws-subscriptions.ts), the apply queue (apply-queue.ts, applying with
// ws-apply.ts), the catch-ups (ws-catch-up.ts), the checkpoint settler (ws-settler.ts) and the watched set
// (ws-watched.ts), all inside one session scope (session-scope.ts): the session returns when the caller stops, and
// throws on the first failure of anything it runs (socket closed, no pong, RPC or database away).
import type WebSocket from 'ws';
import { isOncepayError, OncepayError, SOURCE_CODES } from '../../common/errors';
import { sleep } from '../../common/sleep';
import { type RpcClient } from '../rpc';
import { createApplyQueue } from './apply-queue';
import type { createSubscriptionSink, SessionCounts, SubscriptionDeps } from './subscription-sink';
import { type SourceMetrics, toSlotNumber } from './ports';
import { createSessionScope, type SessionScope } from './session-scope';
import { catchUp } from './ws-catch-up';
import { createObservedApplier, type Observed } from './ws-apply';
import {
  catchUpFrom,
  parseWsMessage,
  slotSubscribeRequest,
  WS_SOURCE,
  type WsCommitment,
  type WsOptions,
} from './ws-plan';
import { createSocketRpc, isAnswer, type SocketRpc } from './ws-rpc';
import { createSettler, SETTLE_SLOTS_BY_HTTP, type Settler } from './ws-settler';
import { closeSocket, keepAlive, openSocket, textOf } from './ws-socket';
import { createSubscriptionSet } from './ws-subscriptions';
import { createWatchedSet } from './ws-watched';

export interface WsDeps extends SubscriptionDeps {
  /** The node's websocket endpoint (ws:// or wss://). */
  url: string;
  /** Opens a socket (default: the `ws` client). */
  connect?: (url: string) => WebSocket;
  rpc: Pick<RpcClient, 'call' | 'getSlot' | 'getTransaction'>;
}

export interface WsStats extends SessionCounts {
  /** Addresses subscribed on the current socket. */
  subscribed: number;
  notifications: number;
  /** Signatures listed by the catch-ups (read again: duplicates where already notified). */
  caughtUp: number;
  /** Notified transactions the node never returned within fetchAttempts (the scanner credits them). */
  notFound: number;
  /** Receipts of confirmed transactions kept as provisional rows. */
  provisional: number;
}

/** What every session of one source shares. */
export interface WsSessionContext {
  deps: WsDeps;
  o: WsOptions;
  stats: WsStats;
  sink: ReturnType<typeof createSubscriptionSink>;
  metrics: SourceMetrics;
  /** Opens the socket (not yet open). */
  connect(): WebSocket;
  /** Set once the source has warned that the node refuses slotSubscribe (it warns once). */
  warned: { noSlots: boolean };
}

/** One socket: returns when `signal` aborts, throws when the socket, the RPC or the database fails. */
export async function runWsSession(c: WsSessionContext, signal: AbortSignal, healthy: () => void): Promise<void> {
  const { deps, o, stats, sink } = c;
  const log = deps.log;
  const checkpoint = toSlotNumber(await deps.ledger.getCheckpoint(o.cluster, WS_SOURCE));
  stats.checkpoint = checkpoint;
  const ws = await openSocket(c.connect, signal);
  stats.sessions++;
  stats.subscribed = 0;

  const scope = createSessionScope(signal);
  const rpc = createSocketRpc((text) => ws.send(text), scope.guard);
  const commitments: WsCommitment[] = o.commitment === 'confirmed' ? ['finalized', 'confirmed'] : ['finalized'];
  const subscriptions = createSubscriptionSet(rpc, commitments, (n) => (stats.subscribed = n));
  const applier = createObservedApplier({ rpc: deps.rpc, sink, stats, log, options: o }, scope.signal);
  const queue = createApplyQueue<Observed>(applier, scope);
  const listed = (read: Observed[]): void => {
    stats.caughtUp += read.length;
    queue.enqueue(read);
  };
  const settler = createSettler({
    rpc: deps.rpc,
    scope,
    subscriptions,
    catchUp: (addresses, from, minContextSlot) =>
      catchUp(deps.rpc, addresses, from, listed, { signal: scope.signal, minContextSlot }),
  });
  const watched = createWatchedSet({
    watched: deps.watched,
    subscriptions,
    follow: settler.follow,
    catchUpFrom: () => catchUpFrom(stats.checkpoint, o.fromSlot, o.catchUpMarginSlots),
    scope,
    log,
  });

  ws.on('message', (raw: WebSocket.Data) => {
    const m = parseWsMessage(textOf(raw));
    if (m.kind === 'logs') {
      const commitment = subscriptions.commitmentOf(m.subscription);
      if (!commitment || m.failed) return;
      stats.notifications++;
      queue.enqueue([{ signature: m.signature, slot: m.slot, commitment }]);
    } else if (m.kind === 'slot') settler.heard(m.slot);
    else if (isAnswer(m)) rpc.answer(m);
    else if (m.kind === 'malformed' || m.kind === 'error') log?.warn({ message: m }, 'unexpected websocket message');
  });
  const stopKeepAlive = keepAlive(ws, o, scope.fail);
  ws.on('close', (code: number, reason: unknown) =>
    scope.fail(
      new OncepayError(
        SOURCE_CODES.WS_CLOSED,
        `websocket closed by the node (${code}${reason ? ` ${String(reason)}` : ''})`,
      ),
    ),
  );
  ws.on('error', (e: Error) => scope.fail(e));
  const refreshTimer = setInterval(watched.tick, o.refreshMs);

  try {
    // The node's slots on this socket first: follow() waits for one to know its subscriptions are applied. A
    // node that refuses them (some providers do) is watched over HTTP instead.
    settler.slotsOnSocket = await slotsOnSocket(rpc, c);
    // Subscribed and caught up to `tip`; what executed before the node applied the subscriptions settles later.
    const from = catchUpFrom(checkpoint, o.fromSlot, o.catchUpMarginSlots);
    const initial = await watched.initial();
    const tip = await settler.follow(initial, from);
    await queue.idle();
    await scope.guard(writeCheckpoint(c, tip, tip));
    watched.started();
    healthy();
    log?.info(
      { subscribed: initial.length, from, checkpoint: stats.checkpoint, commitment: o.commitment },
      'ws subscribed and caught up',
    );
    await followCheckpoint(c, scope, settler, queue.idle, tip);
  } catch (e) {
    if (signal.aborted) return;
    throw scope.failure() ?? e;
  } finally {
    scope.end();
    stopKeepAlive();
    clearInterval(refreshTimer);
    rpc.close(new OncepayError(SOURCE_CODES.STOPPED, 'session ended'));
    // A graceful stop lets the ledger batch in flight commit (its RPC calls are aborted: nothing half-applied).
    await queue.running()?.catch(() => undefined);
    closeSocket(ws);
  }
}

/** Whether the node notifies its slots on this socket: slotSubscribe answered, or refused (warned once). */
async function slotsOnSocket(rpc: SocketRpc, c: WsSessionContext): Promise<boolean> {
  return rpc.request(slotSubscribeRequest).then(
    () => true,
    (e: unknown) => {
      if (!isOncepayError(e, SOURCE_CODES.WS_REQUEST_REFUSED)) throw e;
      if (!c.warned.noSlots)
        c.deps.log?.warn(
          { err: (e as Error).message, settleSlots: SETTLE_SLOTS_BY_HTTP },
          'the node refuses slotSubscribe: subscriptions settle by its processed slot over HTTP instead',
        );
      c.warned.noSlots = true;
      return false;
    },
  );
}

/**
 * Until the session ends: a finalized slot read one period ago is the next checkpoint, once everything notified
 * since is applied and every set of addresses settling below it is caught up (held: bounded before those
 * catch-ups are applied).
 */
async function followCheckpoint(
  c: WsSessionContext,
  scope: SessionScope,
  settler: Settler,
  idle: () => Promise<void>,
  tip: number,
): Promise<never> {
  let mark = tip;
  for (;;) {
    await sleep(c.o.checkpointMs, scope.signal);
    const next = await scope.guard(c.deps.rpc.getSlot('finalized', { signal: scope.signal }));
    const bound = settler.held(mark);
    await settler.settle(next);
    await idle();
    await scope.guard(writeCheckpoint(c, bound, next));
    mark = next;
  }
}

/** The checkpoint to `slot` (when it moves forward), and its lag behind the finalized slot `tip`. */
async function writeCheckpoint(c: WsSessionContext, slot: number, tip: number): Promise<void> {
  const { stats } = c;
  if (stats.checkpoint === null || slot > stats.checkpoint) await c.sink.apply([], { slot, checkpoint: slot });
  c.metrics.setCheckpointLag(c.o.cluster, WS_SOURCE, Math.max(0, tip - (stats.checkpoint ?? tip)));
}
