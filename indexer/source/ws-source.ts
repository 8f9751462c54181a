// The subscription source for plain RPC providers: one websocket, one `logsSubscribe` per watched address (a
// node takes one address per `mentions`) at `finalized` — and a second at `confirmed` with --commitment confirmed —
// then `getTransaction` for each notified signature through the same RPC client (retries, backoff,
// oncepay_rpc_errors_total) as the scanner, decoded by the same decoder. Finalized transactions go to the ledger
// as source 'ws'; confirmed ones to provisional_receipts, settled as the (cluster, 'ws') checkpoint passes them
// (subscription-sink.ts, shared with the Yellowstone stream).
//
// The checkpoint: after each (re)connect, once every address is subscribed, the source reads the finalized slot S
// and catches up with getSignaturesForAddress from a margin below its checkpoint; when that is applied the
// checkpoint is S. What the node executed just before it applied the subscriptions settles later (ws-settler.ts);
// until then the checkpoint stays at S. New watched addresses (the refresh, ws-watched.ts) go the same way. While
// the socket is up the checkpoint follows a finalized slot read `checkpointMs` earlier, once everything notified
// until then is applied. Any failure (socket closed, no pong, RPC or database away) ends the session
// (ws-session.ts); the next one starts after a backoff with jitter and catches up again. The scanner stays the
// source of truth.
import WebSocket from 'ws';
import { createSubscriptionSink, runSessions, sessionCounts } from './subscription-sink';
import { NO_METRICS } from './ports';
import { DEFAULT_WS, WS_SOURCE, type WsOptions } from './ws-plan';
import { runWsSession, type WsDeps, type WsSessionContext, type WsStats } from './ws-session';

export type { WsDeps, WsStats } from './ws-session';
export { SETTLE_SLOTS_BY_HTTP } from './ws-settler';

export function createWsSource(deps: WsDeps, options: Pick<WsOptions, 'cluster'> & Partial<WsOptions>) {
  const o = { ...DEFAULT_WS, ...options };
  const metrics = deps.metrics ?? NO_METRICS;
  // transactions: getTransaction answers decoded (finalized and confirmed).
  const stats: WsStats = {
    ...sessionCounts(),
    subscribed: 0,
    notifications: 0,
    caughtUp: 0,
    notFound: 0,
    provisional: 0,
  };
  const context: WsSessionContext = {
    deps,
    o,
    stats,
    sink: createSubscriptionSink(deps, { cluster: o.cluster, source: WS_SOURCE, commitment: o.commitment }, stats),
    metrics,
    connect: () =>
      deps.connect ? deps.connect(deps.url) : new WebSocket(deps.url, { handshakeTimeout: o.idleTimeoutMs }),
    warned: { noSlots: false },
  };

  async function run({ signal }: { signal: AbortSignal }): Promise<WsStats> {
    await runSessions(signal, (s, healthy) => runWsSession(context, s, healthy), {
      backoff: o.backoff,
      kind: WS_SOURCE,
      stats,
      log: deps.log,
      metrics,
    });
    return stats;
  }

  return { run, stats: () => ({ ...stats }) };
}
