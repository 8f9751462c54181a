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

export function createSubscriptions(chain: Chain): Subscriptions {
  const wss = new WebSocketServer({ noServer: true });
  // As on a node: subscription ids count from 0, and a notification's context is its slot alone (no apiVersion,
  // which only the HTTP answers carry).
  let nextId = 0;

  wss.on('connection', (ws: WebSocket) => {
    const sigSubs = new Map<number, SigSub>();
    const slotSubs = new Set<number>();
    const send = (v: unknown): void => {
      if (ws.readyState === WebSocket.OPEN) ws.send(stringifyRpc(v));
    };
    const notifySig = (s: SigSub, slot: number, err: unknown): void => {
      sigSubs.delete(s.id);
      send({
        jsonrpc: '2.0',
        method: 'signatureNotification',
        params: { result: { context: { slot }, value: { err } }, subscription: s.id },
      });
    };
    const logsSubs = new Map<number, LogsSub>();
    const accountSubs = new Map<number, AccountSub>();
    const rootSubs = new Set<number>();
    const accountValue = (s: AccountSub): unknown => {
      const a = chain.accountAt(s.address, s.commitment);
      return a ? encodeAccount(a, s.encoding, chain.decimalsOf) : null;
    };
    const off = chain.subscribe((e: ChainEvent) => {
      if (e.type === 'slot') {
        for (const id of slotSubs)
          send({
            jsonrpc: '2.0',
            method: 'slotNotification',
            params: { result: { parent: e.parent, root: e.root, slot: e.slot }, subscription: id },
          });
        for (const id of rootSubs)
          send({ jsonrpc: '2.0', method: 'rootNotification', params: { result: e.root, subscription: id } });
        return;
      }
      for (const s of [...sigSubs.values()]) {
        if (s.signature === e.signature && RANK[e.commitment] === RANK[s.commitment]) notifySig(s, e.slot, e.err);
      }
      if (logsSubs.size === 0 && accountSubs.size === 0) return;
      const rec = chain.recordOf(e.signature);
      if (!rec) return;
      const keys = allAccountKeys(wireOf(rec), rec.meta.loadedAddresses);
      for (const s of logsSubs.values()) {
        if (s.mentions !== null && !keys.includes(s.mentions)) continue;
        if (e.commitment === 'processed') s.executed.add(e.signature);
        if (RANK[e.commitment] !== RANK[s.commitment] || !s.executed.delete(e.signature)) continue;
        send({
          jsonrpc: '2.0',
          method: 'logsNotification',
          params: {
            result: {
              context: { slot: e.slot },
              value: { signature: e.signature, err: e.err, logs: rec.meta.logMessages },
            },
            subscription: s.id,
          },
        });
      }
      for (const s of accountSubs.values()) {
        if (RANK[e.commitment] !== RANK[s.commitment] || !keys.includes(s.address)) continue;
        const value = accountValue(s);
        const text = stringifyRpc(value);
        if (text === s.last) continue;
        s.last = text;
        send({
          jsonrpc: '2.0',
          method: 'accountNotification',
          params: { result: { context: { slot: e.slot }, value }, subscription: s.id },
        });
      }
    });
    ws.on('close', () => off());
    ws.on('message', (raw: Buffer | string) => {
      let req: { id?: unknown; method?: unknown; params?: unknown };
      try {
        req = JSON.parse(raw.toString());
      } catch {
        send({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
        return;
      }
      const id = req.id ?? null;
      const params = Array.isArray(req.params) ? req.params : [];
      switch (req.method) {
        case 'signatureSubscribe': {
          if (typeof params[0] !== 'string') {
            send({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params' }, id });
            return;
          }
          const cfg = (params[1] ?? {}) as { commitment?: unknown };
          const sub: SigSub = { id: nextId++, signature: params[0], commitment: commitmentOf(cfg.commitment) };
          sigSubs.set(sub.id, sub);
          send({ jsonrpc: '2.0', result: sub.id, id });
          // Already at the asked commitment: a node notifies on its next status check; we do it now.
          const st = chain.signatureStatus(sub.signature, false);
          if (st && RANK[st.confirmationStatus] >= RANK[sub.commitment]) notifySig(sub, st.slot, st.err);
          return;
        }
        case 'slotSubscribe': {
          const sid = nextId++;
          slotSubs.add(sid);
          send({ jsonrpc: '2.0', result: sid, id });
          return;
        }
        case 'logsSubscribe': {
          const filter = params[0];
          let mentions: string | null = null;
          if (filter && typeof filter === 'object' && Array.isArray((filter as { mentions?: unknown }).mentions)) {
            mentions = String((filter as { mentions: unknown[] }).mentions[0]);
          } else if (filter !== 'all' && filter !== 'allWithVotes') {
            send({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params' }, id });
            return;
          }
          const sub: LogsSub = {
            id: nextId++,
            mentions,
            commitment: commitmentOf(((params[1] ?? {}) as { commitment?: unknown }).commitment),
            executed: new Set(),
          };
          logsSubs.set(sub.id, sub);
          send({ jsonrpc: '2.0', result: sub.id, id });
          return;
        }
        case 'accountSubscribe': {
          if (typeof params[0] !== 'string') {
            send({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params' }, id });
            return;
          }
          const cfg = (params[1] ?? {}) as { commitment?: unknown; encoding?: unknown };
          const encoding: AccountEncoding =
            cfg.encoding === 'jsonParsed' ? 'jsonParsed' : cfg.encoding === 'base58' ? 'base58' : 'base64';
          const sub: AccountSub = {
            id: nextId++,
            address: params[0],
            commitment: commitmentOf(cfg.commitment),
            encoding,
            last: '',
          };
          sub.last = stringifyRpc(accountValue(sub));
          accountSubs.set(sub.id, sub);
          send({ jsonrpc: '2.0', result: sub.id, id });
          return;
        }
        case 'rootSubscribe': {
          const sid = nextId++;
          rootSubs.add(sid);
          send({ jsonrpc: '2.0', result: sid, id });
          return;
        }
        case 'logsUnsubscribe':
          send({ jsonrpc: '2.0', result: logsSubs.delete(Number(params[0])), id });
          return;
        case 'accountUnsubscribe':
          send({ jsonrpc: '2.0', result: accountSubs.delete(Number(params[0])), id });
          return;
        case 'rootUnsubscribe':
          send({ jsonrpc: '2.0', result: rootSubs.delete(Number(params[0])), id });
          return;
        case 'signatureUnsubscribe':
          send({ jsonrpc: '2.0', result: sigSubs.delete(Number(params[0])), id });
          return;
        case 'slotUnsubscribe':
          send({ jsonrpc: '2.0', result: slotSubs.delete(Number(params[0])), id });
          return;
        default:
          send({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id });
      }
    });
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
