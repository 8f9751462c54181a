// The subscription source for plain RPC providers: one websocket, one `logsSubscribe` per watched address (a
// node takes one address per `mentions`) at `finalized` — and a second at `confirmed` with --commitment confirmed —
// then `getTransaction` for each notified signature through the same RPC client (retries, backoff,
// oncepay_rpc_errors_total) as the scanner, decoded by the same decoder. Finalized transactions go to the ledger
// as source 'ws'; confirmed ones to provisional_receipts, settled as the (cluster, 'ws') checkpoint passes them
// (observed.ts, shared with the Yellowstone stream).
//
// The checkpoint: after each (re)connect, once every address is subscribed, the source reads the finalized slot S
// and catches up with getSignaturesForAddress from a margin below its checkpoint; when that is applied the
// checkpoint is S. A node notifies only what it executes after it has applied a subscription (it collects a
// transaction's logs for the subscribed addresses as it executes it), and what it executed just before is final
// only some slots later (32 on solana-test-validator): that first catch-up cannot list it. So each subscribed set of
// addresses settles: the source waits for a slot notification (same socket, after the logsSubscribe answers, so the
// node has applied them; a node that refuses slotSubscribe is watched over HTTP instead, for SETTLE_SLOTS_BY_HTTP
// processed slots) and reads the processed slot U; once the finalized slot reaches U it catches those
// addresses up once more from S + 1 (minContextSlot U), and until that is applied the checkpoint stays at S. New
// watched addresses (the refresh) go the same way. While the socket is up the checkpoint follows a finalized slot
// read `checkpointMs` earlier, once everything notified until then is applied. Any failure (socket closed, no pong,
// RPC or database away) ends the session; the next one starts after a backoff with jitter and catches up again.
// The scanner stays the source of truth.
import WebSocket from 'ws';
import { isOncepayError, OncepayError, SOURCE_CODES } from '../../common/errors';
import { decodeTransaction, type Receipt } from '../decode';
import { abortableSleep, backoffDelay, type RpcClient } from '../rpc';
import { createObservedSink, onStop, runSessions, SessionCounts, sessionCounts, SubscriptionDeps } from './observed';
import { NO_METRICS, toSlotNumber } from './ports';
import {
  catchUpFrom,
  catchUpPage,
  DEFAULT_WS,
  diffWatched,
  logsSubscribeRequest,
  logsUnsubscribeRequest,
  parseWsMessage,
  SignatureInfo,
  slotSubscribeRequest,
  WS_SOURCE,
  WsCommitment,
  WsOptions,
} from './ws-plan';

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

interface Observed {
  signature: string;
  slot: number;
  commitment: WsCommitment;
}

const PAGE = 1000;
/**
 * Without slot notifications (a node that refuses slotSubscribe), how many processed slots past the one read after
 * the logsSubscribe answers stand for "the node has applied them": over HTTP nothing orders the node's pubsub thread
 * against its banks, so a margin (~3 s at 400 ms slots) replaces the proof a notification on the socket gives.
 */
export const SETTLE_SLOTS_BY_HTTP = 8;
const SLOT_POLL_MS = 100;

function textOf(raw: WebSocket.Data): string {
  if (typeof raw === 'string') return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.from(raw as ArrayBuffer).toString('utf8');
}

export function createWsSource(deps: WsDeps, options: Pick<WsOptions, 'cluster'> & Partial<WsOptions>) {
  const o = { ...DEFAULT_WS, ...options };
  const log = deps.log;
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
  const sink = createObservedSink(deps, { cluster: o.cluster, source: WS_SOURCE, commitment: o.commitment }, stats);
  const commitments: WsCommitment[] = o.commitment === 'confirmed' ? ['finalized', 'confirmed'] : ['finalized'];
  let warnedNoSlots = false;

  function open(signal: AbortSignal): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = deps.connect ? deps.connect(deps.url) : new WebSocket(deps.url, { handshakeTimeout: o.idleTimeoutMs });
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
      const onClose = (code: number): void => settle(new Error(`websocket closed while connecting (${code})`));
      ws.on('open', onOpen);
      ws.on('error', onError);
      ws.on('close', onClose);
      unlisten = onStop(signal, () => ws.terminate());
    });
  }

  /** One socket: returns when `signal` aborts, throws when the socket, the RPC or the database fails. */
  async function session(signal: AbortSignal, healthy: () => void): Promise<void> {
    const checkpoint = toSlotNumber(await deps.ledger.getCheckpoint(o.cluster, WS_SOURCE));
    stats.checkpoint = checkpoint;
    const ws = await open(signal);
    stats.sessions++;
    stats.subscribed = 0;

    // The session ends on the caller's stop or on the first failure of anything it runs.
    const ac = new AbortController();
    let failure: unknown = null;
    const fail = (e: unknown): void => {
      if (ac.signal.aborted) return;
      failure = e;
      ac.abort();
    };
    const ended = new Promise<never>((_, reject) =>
      ac.signal.addEventListener('abort', () => reject(failure ?? new Error('stopped')), { once: true }),
    );
    ended.catch(() => undefined);
    const unlistenStop = onStop(signal, () => ac.abort());
    const guard = <T>(p: Promise<T>): Promise<T> => Promise.race([p, ended]);

    // ---- requests and subscriptions over the socket ----
    let nextId = 1;
    const answers = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    /** Subscribe requests in flight: their answer's subscription id is mapped as the answer is read. */
    const subscribing = new Map<number, { address: string; commitment: WsCommitment }>();
    const subs = new Map<number, { address: string; commitment: WsCommitment }>();
    const byAddress = new Map<string, number[]>();
    const request = (build: (id: number) => string): Promise<unknown> => {
      const id = nextId++;
      const answer = new Promise<unknown>((resolve, reject) => answers.set(id, { resolve, reject }));
      ws.send(build(id));
      return guard(answer);
    };
    async function subscribe(address: string): Promise<void> {
      const ids = await Promise.all(
        commitments.map((commitment) =>
          request((id) => {
            subscribing.set(id, { address, commitment });
            return logsSubscribeRequest(id, address, commitment);
          }),
        ),
      );
      byAddress.set(address, ids as number[]);
      stats.subscribed = byAddress.size;
    }
    async function unsubscribe(address: string): Promise<void> {
      const ids = byAddress.get(address) ?? [];
      byAddress.delete(address);
      stats.subscribed = byAddress.size;
      for (const sub of ids) subs.delete(sub);
      await Promise.all(ids.map((sub) => request((id) => logsUnsubscribeRequest(id, sub))));
    }

    // ---- what was observed, fetched and applied in batches, one batch at a time ----
    const queue: Observed[] = [];
    let busy: Promise<void> | null = null;
    const kick = (): void => {
      if (busy || queue.length === 0 || ac.signal.aborted) return;
      busy = (async () => {
        while (queue.length > 0 && !ac.signal.aborted) await applyObserved(queue.splice(0));
      })()
        .catch(fail)
        .finally(() => {
          busy = null;
          kick();
        });
    };
    const enqueue = (items: Observed[]): void => {
      queue.push(...items);
      kick();
    };
    /** Everything observed so far is applied. */
    async function idle(): Promise<void> {
      while (busy || queue.length > 0) {
        kick();
        if (busy) await guard(busy);
      }
      if (ac.signal.aborted) await ended;
    }

    async function fetchTransaction(x: Observed): Promise<Record<string, unknown> | null> {
      for (let n = 1; ; n++) {
        const tx = await deps.rpc.getTransaction(x.signature, x.commitment, { signal: ac.signal });
        if (tx) return tx;
        if (n >= o.fetchAttempts) return null;
        await abortableSleep(backoffDelay(n, o.backoff, Math.random()), ac.signal);
      }
    }

    async function applyObserved(batch: Observed[]): Promise<void> {
      const seen = new Set<string>();
      const unique = batch.filter((x) => {
        const k = `${x.commitment}:${x.signature}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
      const final: Receipt[] = [];
      const provisional: Array<{ slot: number; receipt: Receipt }> = [];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < unique.length) {
          const x = unique[next++];
          const tx = await fetchTransaction(x);
          if (tx === null) {
            stats.notFound++;
            log?.warn(
              { signature: x.signature, commitment: x.commitment },
              'notified transaction not returned by getTransaction; the scanner covers it',
            );
            continue;
          }
          stats.transactions++;
          const slot = Number(tx.slot ?? x.slot);
          const at = { signature: x.signature, slot };
          const decode = (): Receipt[] => decodeTransaction(tx, { cluster: o.cluster });
          if (x.commitment === 'finalized') final.push(...sink.decode(decode, at));
          else provisional.push(...sink.decode(decode, at, { receipts: 0 }).map((receipt) => ({ slot, receipt })));
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, unique.length)) }, worker));
      if (provisional.length > 0) {
        await sink.provisional(provisional);
        stats.provisional += provisional.length;
      }
      const finals = unique.filter((x) => x.commitment === 'finalized');
      if (finals.length > 0) await sink.apply(final, { slot: Math.max(...finals.map((x) => x.slot)) });
    }

    async function writeCheckpoint(slot: number, tip: number): Promise<void> {
      if (stats.checkpoint === null || slot > stats.checkpoint) await sink.apply([], { slot, checkpoint: slot });
      metrics.setCheckpointLag(o.cluster, WS_SOURCE, Math.max(0, tip - (stats.checkpoint ?? tip)));
    }

    /**
     * Every finalized, succeeded transaction naming `addresses` from slot `from` on, through the queue; with
     * `minContextSlot`, from a node whose finalized slot has reached it (else the call fails: no silent short list).
     */
    async function catchUp(addresses: readonly string[], from: number, minContextSlot?: number): Promise<void> {
      for (const address of addresses) {
        let before: string | null = null;
        do {
          const config = {
            commitment: 'finalized',
            limit: PAGE,
            ...(before === null ? {} : { before }),
            ...(minContextSlot === undefined ? {} : { minContextSlot }),
          };
          const page = await deps.rpc.call<SignatureInfo[]>('getSignaturesForAddress', [address, config], {
            signal: ac.signal,
          });
          if (!Array.isArray(page)) throw new Error(`getSignaturesForAddress(${address}): not a list`);
          const step = catchUpPage(page, from, PAGE);
          stats.caughtUp += step.read.length;
          enqueue(step.read.map((r) => ({ ...r, commitment: 'finalized' as const })));
          before = step.before;
        } while (before !== null);
      }
    }

    // ---- subscribed addresses settling: caught up once more when finality has passed their subscription ----
    let slotHeard = -1;
    const slotWaiters = new Set<{ above: number; resolve: () => void }>();
    /** Resolves once the node has notified a slot above `above` on this socket. */
    const slotAbove = (above: number): Promise<void> =>
      guard(
        new Promise<void>((resolve) => {
          if (slotHeard > above) resolve();
          else slotWaiters.add({ above, resolve });
        }),
      );
    /** Resolves once the node's processed slot (over HTTP) is above `above`. */
    async function processedAbove(above: number): Promise<void> {
      while ((await guard(deps.rpc.getSlot('processed', { signal: ac.signal }))) <= above)
        await abortableSleep(SLOT_POLL_MS, ac.signal);
    }
    /** Whether the node notifies its slots on this socket (set at the session's start). */
    let slotsOnSocket = true;
    /**
     * The last slot the node may have executed without the subscriptions answered so far: a slot it began after
     * we read P (the processed slot, read after their answers) is notified after them, so once one is notified
     * they are applied, and every slot after the processed one read then collects their logs. Without slot
     * notifications, SETTLE_SLOTS_BY_HTTP processed slots stand for that notification.
     */
    async function appliedAfter(): Promise<number> {
      const p = await guard(deps.rpc.getSlot('processed', { signal: ac.signal }));
      if (slotsOnSocket) await slotAbove(p + 1);
      else await processedAbove(p + SETTLE_SLOTS_BY_HTTP);
      return guard(deps.rpc.getSlot('processed', { signal: ac.signal }));
    }
    /** Sets of addresses not yet caught up past `until`; the checkpoint stays at or below each one's `hold`. */
    const settling: Array<{ addresses: readonly string[]; hold: number; until: number }> = [];
    const held = (mark: number): number => Math.min(mark, ...settling.map((x) => x.hold));

    /**
     * Subscribes `addresses`, catches them up from `from` (null: none, live only) to the finalized slot read after
     * the subscriptions, which it returns, and leaves them settling.
     */
    async function follow(addresses: readonly string[], from: number | null): Promise<number> {
      const entry = { addresses, hold: from ?? Infinity, until: Infinity };
      settling.push(entry);
      await guard(Promise.all(addresses.map(subscribe)));
      const final = await guard(deps.rpc.getSlot('finalized', { signal: ac.signal }));
      if (from !== null) await guard(catchUp(addresses, from));
      entry.hold = final;
      entry.until = await appliedAfter();
      return final;
    }

    /** The settling sets whose `until` is final now: caught up from their hold (still subscribed ones). */
    async function settle(finalized: number): Promise<void> {
      for (const entry of settling.filter((x) => x.until <= finalized)) {
        const still = entry.addresses.filter((a) => byAddress.has(a));
        await guard(catchUp(still, entry.hold + 1, entry.until));
        settling.splice(settling.indexOf(entry), 1);
      }
    }

    // ---- the socket ----
    let lastHeard = Date.now();
    ws.on('message', (raw: WebSocket.Data) => {
      lastHeard = Date.now();
      const m = parseWsMessage(textOf(raw));
      if (m.kind === 'logs') {
        const sub = subs.get(m.subscription);
        if (!sub || m.failed) return;
        stats.notifications++;
        enqueue([{ signature: m.signature, slot: m.slot, commitment: sub.commitment }]);
      } else if (m.kind === 'slot') {
        slotHeard = Math.max(slotHeard, m.slot);
        for (const w of [...slotWaiters]) {
          if (m.slot <= w.above) continue;
          slotWaiters.delete(w);
          w.resolve();
        }
      } else if (m.kind === 'result' || (m.kind === 'error' && m.id !== null)) {
        const id = m.id as number;
        const waiting = answers.get(id);
        answers.delete(id);
        const subscribe = subscribing.get(id);
        subscribing.delete(id);
        if (m.kind === 'error') {
          waiting?.reject(
            new OncepayError(
              SOURCE_CODES.WS_REQUEST_REFUSED,
              `websocket request ${id} refused: ${m.code ?? ''} ${m.message}`,
              {
                rpcCode: m.code,
              },
            ),
          );
        } else if (subscribe && typeof m.result !== 'number') {
          waiting?.reject(new Error(`logsSubscribe answered ${JSON.stringify(m.result)}, not a subscription id`));
        } else {
          if (subscribe) subs.set(m.result as number, subscribe);
          waiting?.resolve(m.result);
        }
      } else if (m.kind === 'malformed' || m.kind === 'error') {
        log?.warn({ message: m }, 'unexpected websocket message');
      }
    });
    ws.on('pong', () => (lastHeard = Date.now()));
    ws.on('close', (code: number, reason: unknown) =>
      fail(new Error(`websocket closed by the node (${code}${reason ? ` ${String(reason)}` : ''})`)),
    );
    ws.on('error', (e: Error) => fail(e));
    const timers = [
      setInterval(() => {
        if (ws.readyState === WebSocket.OPEN) ws.ping();
      }, o.pingMs),
      setInterval(
        () => {
          if (Date.now() - lastHeard > o.idleTimeoutMs) fail(new Error('websocket idle: no message, no pong'));
        },
        Math.min(1000, o.idleTimeoutMs),
      ),
    ];

    let current: string[] = [];
    let refreshing = false;
    /** New watched addresses subscribed and caught up from the checkpoint, gone ones dropped. */
    async function refresh(): Promise<void> {
      const next = [...new Set(await deps.watched())];
      const change = diffWatched(current, next);
      if (change.subscribe.length === 0 && change.unsubscribe.length === 0) return;
      await Promise.all(change.unsubscribe.map(unsubscribe));
      current = current.filter((a) => !change.unsubscribe.includes(a));
      if (change.subscribe.length > 0) {
        // A subscription refused or a catch-up failed ends the session: the next one subscribes and catches up all.
        await follow(change.subscribe, catchUpFrom(stats.checkpoint, o.fromSlot, o.catchUpMarginSlots)).catch((e) => {
          fail(e);
          throw e;
        });
      }
      current.push(...change.subscribe);
      log?.info(
        { subscribed: change.subscribe.length, dropped: change.unsubscribe.length },
        'ws subscriptions updated',
      );
    }
    const refreshTimer = setInterval(() => {
      if (refreshing || ac.signal.aborted) return;
      refreshing = true;
      refresh()
        .catch((e) => {
          if (!ac.signal.aborted) log?.warn({ err: (e as Error).message }, 'could not update the subscriptions');
        })
        .finally(() => (refreshing = false));
    }, o.refreshMs);
    timers.push(refreshTimer);
    refreshing = true; // the first subscriptions below

    try {
      // The node's slots on this socket first: follow() waits for one to know its subscriptions are applied. A
      // node that refuses them (some providers do) is watched over HTTP instead (appliedAfter).
      slotsOnSocket = await request(slotSubscribeRequest).then(
        () => true,
        (e: unknown) => {
          if (!isOncepayError(e, SOURCE_CODES.WS_REQUEST_REFUSED)) throw e;
          if (!warnedNoSlots)
            log?.warn(
              { err: (e as Error).message, settleSlots: SETTLE_SLOTS_BY_HTTP },
              'the node refuses slotSubscribe: subscriptions settle by its processed slot over HTTP instead',
            );
          warnedNoSlots = true;
          return false;
        },
      );
      current = [...new Set(await guard(deps.watched()))].sort();
      // Subscribed and caught up to `tip`; what executed before the node applied the subscriptions settles later.
      const from = catchUpFrom(checkpoint, o.fromSlot, o.catchUpMarginSlots);
      const tip = await follow(current, from);
      await idle();
      await guard(writeCheckpoint(tip, tip));
      refreshing = false;
      healthy();
      log?.info(
        { subscribed: current.length, from, checkpoint: stats.checkpoint, commitment: o.commitment },
        'ws subscribed and caught up',
      );

      // A finalized slot read one period ago is the next checkpoint, once everything notified since is applied and
      // every set of addresses settling below it is caught up (held: bounded before those catch-ups are applied).
      let mark = tip;
      for (;;) {
        await abortableSleep(o.checkpointMs, ac.signal);
        const next = await guard(deps.rpc.getSlot('finalized', { signal: ac.signal }));
        const bound = held(mark);
        await settle(next);
        await idle();
        await guard(writeCheckpoint(bound, next));
        mark = next;
      }
    } catch (e) {
      if (signal.aborted) return;
      throw failure ?? e;
    } finally {
      ac.abort();
      unlistenStop();
      for (const t of timers) clearInterval(t);
      for (const a of answers.values()) a.reject(new Error('session ended'));
      // A graceful stop lets the ledger batch in flight commit (its RPC calls are aborted: nothing half-applied).
      await (busy as Promise<void> | null)?.catch(() => undefined);
      if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'stopping');
      else ws.terminate();
    }
  }

  async function run({ signal }: { signal: AbortSignal }): Promise<WsStats> {
    await runSessions(signal, session, { backoff: o.backoff, kind: WS_SOURCE, stats, log, metrics });
    return stats;
  }

  return { run, stats: () => ({ ...stats }) };
}
