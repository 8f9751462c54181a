// Websocket subscriptions: signatureSubscribe (one-shot, as on a node), slotSubscribe, rootSubscribe, logsSubscribe
// (all / mentions) and accountSubscribe, each notified at its commitment.
// A logs subscription notifies only transactions executed while it existed, at any commitment: a node collects a
// transaction's logs for the mentioned addresses it is asked about when it executes it (Agave's bank
// transaction_log_collector, configured by the subscriptions), so one executed before logsSubscribe is never
// notified, even when it becomes confirmed or final afterwards.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import WebSocket, { Server as WebSocketServer } from 'ws';
import type { Chain, ChainEvent } from './chain';
import { stringifyRpc } from './json';
import type { Commitment } from './types';
import { AccountEncoding, encodeAccount } from './encode';
import { allAccountKeys } from './wire';
import { wireOf } from './methods/records';

const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

interface SigSub {
  id: number;
  signature: string;
  commitment: Commitment;
}
interface LogsSub {
  id: number;
  mentions: string | null;
  commitment: Commitment;
  /** Transactions executed while the subscription existed, not yet notified at its commitment. */
  executed: Set<string>;
}
interface AccountSub {
  id: number;
  address: string;
  commitment: Commitment;
  encoding: AccountEncoding;
  last: string;
}

export interface Subscriptions {
  handleUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void;
  /** Fault: end every open websocket abruptly (no close frame), as a dropped connection does; returns how many. */
  dropAll(): number;
  close(): void;
}

function commitmentOf(v: unknown): Commitment {
  if (v === 'processed' || v === 'recent') return 'processed';
  if (v === 'confirmed' || v === 'single' || v === 'singleGossip') return 'confirmed';
  return 'finalized';
}

/** One websocket's subscriptions; `ids` is the server's counter, shared by every connection. */
interface Connection {
  readonly chain: Chain;
  readonly ws: WebSocket;
  readonly ids: { next: number };
  readonly sigSubs: Map<number, SigSub>;
  readonly slotSubs: Set<number>;
  readonly logsSubs: Map<number, LogsSub>;
  readonly accountSubs: Map<number, AccountSub>;
  readonly rootSubs: Set<number>;
}

type Params = unknown[];

function send(c: Connection, v: unknown): void {
  if (c.ws.readyState === WebSocket.OPEN) c.ws.send(stringifyRpc(v));
}

function invalidParams(c: Connection, id: unknown): void {
  send(c, { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params' }, id });
}

function notifySig(c: Connection, s: SigSub, slot: number, err: unknown): void {
  c.sigSubs.delete(s.id);
  send(c, {
    jsonrpc: '2.0',
    method: 'signatureNotification',
    params: { result: { context: { slot }, value: { err } }, subscription: s.id },
  });
}

function accountValue(chain: Chain, s: AccountSub): unknown {
  const a = chain.accountAt(s.address, s.commitment);
  return a ? encodeAccount(a, s.encoding, chain.decimalsOf) : null;
}

function onSlot(c: Connection, e: Extract<ChainEvent, { type: 'slot' }>): void {
  for (const id of c.slotSubs)
    send(c, {
      jsonrpc: '2.0',
      method: 'slotNotification',
      params: { result: { parent: e.parent, root: e.root, slot: e.slot }, subscription: id },
    });
  for (const id of c.rootSubs)
    send(c, { jsonrpc: '2.0', method: 'rootNotification', params: { result: e.root, subscription: id } });
}

type TxEvent = Exclude<ChainEvent, { type: 'slot' }>;

function notifyLogs(c: Connection, e: TxEvent, keys: string[], logs: unknown): void {
  for (const s of c.logsSubs.values()) {
    if (s.mentions !== null && !keys.includes(s.mentions)) continue;
    if (e.commitment === 'processed') s.executed.add(e.signature);
    if (RANK[e.commitment] !== RANK[s.commitment] || !s.executed.delete(e.signature)) continue;
    send(c, {
      jsonrpc: '2.0',
      method: 'logsNotification',
      params: {
        result: { context: { slot: e.slot }, value: { signature: e.signature, err: e.err, logs } },
        subscription: s.id,
      },
    });
  }
}

function notifyAccounts(c: Connection, e: TxEvent, keys: string[]): void {
  for (const s of c.accountSubs.values()) {
    if (RANK[e.commitment] !== RANK[s.commitment] || !keys.includes(s.address)) continue;
    const value = accountValue(c.chain, s);
    const text = stringifyRpc(value);
    if (text === s.last) continue;
    s.last = text;
    send(c, {
      jsonrpc: '2.0',
      method: 'accountNotification',
      params: { result: { context: { slot: e.slot }, value }, subscription: s.id },
    });
  }
}

function onChainEvent(c: Connection, e: ChainEvent): void {
  if (e.type === 'slot') {
    onSlot(c, e);
    return;
  }
  for (const s of [...c.sigSubs.values()]) {
    if (s.signature === e.signature && RANK[e.commitment] === RANK[s.commitment]) notifySig(c, s, e.slot, e.err);
  }
  if (c.logsSubs.size === 0 && c.accountSubs.size === 0) return;
  const rec = c.chain.recordOf(e.signature);
  if (!rec) return;
  const keys = allAccountKeys(wireOf(rec), rec.meta.loadedAddresses);
  notifyLogs(c, e, keys, rec.meta.logMessages);
  notifyAccounts(c, e, keys);
}

function signatureSubscribe(c: Connection, id: unknown, params: Params): void {
  if (typeof params[0] !== 'string') {
    invalidParams(c, id);
    return;
  }
  const cfg = (params[1] ?? {}) as { commitment?: unknown };
  const sub: SigSub = { id: c.ids.next++, signature: params[0], commitment: commitmentOf(cfg.commitment) };
  c.sigSubs.set(sub.id, sub);
  send(c, { jsonrpc: '2.0', result: sub.id, id });
  // Already at the asked commitment: a node notifies on its next status check; we do it now.
  const st = c.chain.signatureStatus(sub.signature, false);
  if (st && RANK[st.confirmationStatus] >= RANK[sub.commitment]) notifySig(c, sub, st.slot, st.err);
}

function logsSubscribe(c: Connection, id: unknown, params: Params): void {
  const filter = params[0];
  let mentions: string | null = null;
  if (filter && typeof filter === 'object' && Array.isArray((filter as { mentions?: unknown }).mentions)) {
    mentions = String((filter as { mentions: unknown[] }).mentions[0]);
  } else if (filter !== 'all' && filter !== 'allWithVotes') {
    invalidParams(c, id);
    return;
  }
  const sub: LogsSub = {
    id: c.ids.next++,
    mentions,
    commitment: commitmentOf(((params[1] ?? {}) as { commitment?: unknown }).commitment),
    executed: new Set(),
  };
  c.logsSubs.set(sub.id, sub);
  send(c, { jsonrpc: '2.0', result: sub.id, id });
}

function accountSubscribe(c: Connection, id: unknown, params: Params): void {
  if (typeof params[0] !== 'string') {
    invalidParams(c, id);
    return;
  }
  const cfg = (params[1] ?? {}) as { commitment?: unknown; encoding?: unknown };
  const encoding: AccountEncoding =
    cfg.encoding === 'jsonParsed' ? 'jsonParsed' : cfg.encoding === 'base58' ? 'base58' : 'base64';
  const sub: AccountSub = {
    id: c.ids.next++,
    address: params[0],
    commitment: commitmentOf(cfg.commitment),
    encoding,
    last: '',
  };
  sub.last = stringifyRpc(accountValue(c.chain, sub));
  c.accountSubs.set(sub.id, sub);
  send(c, { jsonrpc: '2.0', result: sub.id, id });
}

/** slotSubscribe / rootSubscribe: a bare id in the given set. */
function subscribeTo(c: Connection, id: unknown, set: Set<number>): void {
  const sid = c.ids.next++;
  set.add(sid);
  send(c, { jsonrpc: '2.0', result: sid, id });
}

function unsubscribe(c: Connection, id: unknown, params: Params, subs: { delete(key: number): boolean }): void {
  send(c, { jsonrpc: '2.0', result: subs.delete(Number(params[0])), id });
}

function onMessage(c: Connection, raw: Buffer | string): void {
  let req: { id?: unknown; method?: unknown; params?: unknown };
  try {
    req = JSON.parse(raw.toString());
  } catch {
    send(c, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    return;
  }
  const id = req.id ?? null;
  const params = Array.isArray(req.params) ? req.params : [];
  switch (req.method) {
    case 'signatureSubscribe':
      return signatureSubscribe(c, id, params);
    case 'slotSubscribe':
      return subscribeTo(c, id, c.slotSubs);
    case 'logsSubscribe':
      return logsSubscribe(c, id, params);
    case 'accountSubscribe':
      return accountSubscribe(c, id, params);
    case 'rootSubscribe':
      return subscribeTo(c, id, c.rootSubs);
    case 'logsUnsubscribe':
      return unsubscribe(c, id, params, c.logsSubs);
    case 'accountUnsubscribe':
      return unsubscribe(c, id, params, c.accountSubs);
    case 'rootUnsubscribe':
      return unsubscribe(c, id, params, c.rootSubs);
    case 'signatureUnsubscribe':
      return unsubscribe(c, id, params, c.sigSubs);
    case 'slotUnsubscribe':
      return unsubscribe(c, id, params, c.slotSubs);
    default:
      send(c, { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id });
  }
}

export function createSubscriptions(chain: Chain): Subscriptions {
  const wss = new WebSocketServer({ noServer: true });
  // As on a node: subscription ids count from 0, and a notification's context is its slot alone (no apiVersion,
  // which only the HTTP answers carry).
  const ids = { next: 0 };

  wss.on('connection', (ws: WebSocket) => {
    const c: Connection = {
      chain,
      ws,
      ids,
      sigSubs: new Map(),
      slotSubs: new Set(),
      logsSubs: new Map(),
      accountSubs: new Map(),
      rootSubs: new Set(),
    };
    const off = chain.subscribe((e: ChainEvent) => onChainEvent(c, e));
    ws.on('close', () => off());
    ws.on('message', (raw: Buffer | string) => onMessage(c, raw));
  });

  return {
    handleUpgrade(req, socket, head) {
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    },
    dropAll() {
      const n = wss.clients.size;
      for (const c of wss.clients) c.terminate();
      return n;
    },
    close() {
      // 1000 = normal closure: web3.js's websocket client reconnects after anything else, forever.
      for (const c of wss.clients) c.close(1000, 'localnet stopping');
      setTimeout(() => {
        for (const c of wss.clients) c.terminate();
      }, 200).unref();
      wss.close();
    },
  };
}
