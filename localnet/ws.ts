// The websocket subscriptions web3.js v1 uses: signatureSubscribe (one-shot, as on a node) and slotSubscribe.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import WebSocket, { Server as WebSocketServer } from 'ws';
import type { Chain, ChainEvent } from './chain';
import { stringifyRpc } from './json';
import { API_VERSION } from './methods/context';
import type { Commitment } from './types';

const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

interface SigSub { id: number; signature: string; commitment: Commitment }

export interface Subscriptions {
  handleUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void;
  close(): void;
}

function commitmentOf(v: unknown): Commitment {
  if (v === 'processed' || v === 'recent') return 'processed';
  if (v === 'confirmed' || v === 'single' || v === 'singleGossip') return 'confirmed';
  return 'finalized';
}

export function createSubscriptions(chain: Chain): Subscriptions {
  const wss = new WebSocketServer({ noServer: true });
  let nextId = 1;

  wss.on('connection', (ws: WebSocket) => {
    const sigSubs = new Map<number, SigSub>();
    const slotSubs = new Set<number>();
    const send = (v: unknown): void => {
      if (ws.readyState === WebSocket.OPEN) ws.send(stringifyRpc(v));
    };
    const notifySig = (s: SigSub, slot: number, err: unknown): void => {
      sigSubs.delete(s.id);
      send({ jsonrpc: '2.0', method: 'signatureNotification', params: { result: { context: { apiVersion: API_VERSION, slot }, value: { err } }, subscription: s.id } });
    };
    const off = chain.subscribe((e: ChainEvent) => {
      if (e.type === 'slot') {
        for (const id of slotSubs) send({ jsonrpc: '2.0', method: 'slotNotification', params: { result: { parent: e.parent, root: e.root, slot: e.slot }, subscription: id } });
        return;
      }
      for (const s of [...sigSubs.values()]) {
        if (s.signature === e.signature && RANK[e.commitment] === RANK[s.commitment]) notifySig(s, e.slot, e.err);
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
