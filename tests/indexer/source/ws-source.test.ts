// The websocket source against a node that misbehaves (a scripted websocket server; getTransaction and the slots
// from a real localnet, the ledger on the real PostgreSQL): a refused logsSubscribe ends the session and the next
// one subscribes again; a failed transaction's notification is not fetched; a notified signature the node never
// returns is given up after fetchAttempts (the scanner credits what exists); the ping frames keep a quiet socket; a
// node that refuses slotSubscribe is followed by its processed slot over HTTP, without reconnecting.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { Connection, Keypair } from '@solana/web3.js';
import WebSocket, { Server as WebSocketServer } from 'ws';
import { AddressInfo } from 'node:net';
import { startLocalnet, LocalnetHandle } from '../../../localnet';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { createLedger } from '../../../indexer/ledger';
import pino from 'pino';
import { createRpcClient } from '../../../indexer/rpc';
import { createWsSource, SETTLE_SLOTS_BY_HTTP } from '../../../indexer/source/ws-source';
import { QUICK_WS, until } from './transfer-fixture';

describe('indexer/source ws: a misbehaving node', function () {
  this.timeout(60_000);
  let net: LocalnetHandle;
  let db: TestDb;
  let server: WebSocketServer;
  let url: string;
  /** Every logsSubscribe the scripted node received, and the sockets it holds. */
  const subscribes: Array<{ address: string; commitment: string; id: number | null }> = [];
  const sockets: WebSocket[] = [];
  let pings = 0;
  /** The next `refuse` logsSubscribe requests are answered with an error. */
  let refuse = 0;
  /** slotSubscribe is answered "Method not found" (a provider without it). */
  let refuseSlots = false;

  before(async () => {
    net = await startLocalnet({ slotMs: 20, finalityDepth: 2, wsOnNextPort: false });
    db = await createTestDb('ws_source');
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => server.once('listening', r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let sub = 100;
    server.on('connection', (ws) => {
      sockets.push(ws);
      ws.on('ping', () => pings++);
      ws.on('message', (raw) => {
        const req = JSON.parse(String(raw));
        if (req.method === 'slotSubscribe' && refuseSlots) {
          ws.send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: req.id }));
          return;
        }
        if (req.method === 'slotSubscribe') {
          // The node's slots (localnet's), as a node notifies them.
          const id = sub++;
          ws.send(JSON.stringify({ jsonrpc: '2.0', result: id, id: req.id }));
          const timer = setInterval(async () => {
            const slot = await new Connection(net.url).getSlot('processed').catch(() => null);
            if (slot !== null && ws.readyState === WebSocket.OPEN)
              ws.send(
                JSON.stringify({
                  jsonrpc: '2.0',
                  method: 'slotNotification',
                  params: { result: { slot, parent: slot - 1, root: 0 }, subscription: id },
                }),
              );
          }, 20);
          ws.on('close', () => clearInterval(timer));
          return;
        }
        if (req.method !== 'logsSubscribe') return;
        const id = refuse > 0 ? null : sub++;
        subscribes.push({ address: req.params[0].mentions[0], commitment: req.params[1].commitment, id });
        if (id === null) {
          refuse--;
          ws.send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid Request' }, id: req.id }));
        } else ws.send(JSON.stringify({ jsonrpc: '2.0', result: id, id: req.id }));
      });
    });
  });
  after(async () => {
    server?.close();
    await net?.stop();
    await db?.drop();
  });

  const notify = (subscription: number, signature: string, err: unknown) =>
    sockets[sockets.length - 1].send(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'logsNotification',
        params: { result: { context: { slot: 5 }, value: { signature, err, logs: [] } }, subscription },
      }),
    );

  it('resubscribes after a refusal, skips failed transactions, gives up on signatures the node never returns', async () => {
    const address = Keypair.generate().publicKey.toBase58();
    refuse = 1;
    const ac = new AbortController();
    const source = createWsSource(
      {
        url,
        rpc: createRpcClient({ url: net.url }),
        ledger: createLedger({ db: db.pool }),
        watched: async () => [address],
      },
      {
        ...QUICK_WS,
        cluster: 'ws-misbehaving',
        pingMs: 50,
        refreshMs: 60_000,
        checkpointMs: 50,
        fetchAttempts: 2,
        backoff: { baseMs: 10, capMs: 20 },
      },
    );
    const running = source.run({ signal: ac.signal });
    try {
      // Refused once: that session failed, the next subscribed at both commitments.
      await until('subscribed', async () => source.stats().subscribed === 1 && source.stats().checkpoint !== null);
      expect(source.stats().reconnects).to.equal(1);
      expect(subscribes.map((s) => s.commitment)).to.have.members(['finalized', 'confirmed', 'finalized', 'confirmed']);
      expect(new Set(subscribes.map((s) => s.address))).to.deep.equal(new Set([address]));
      const sessions = source.stats().sessions;

      // The live session's finalized subscription.
      const finalizedSub = subscribes.filter((x) => x.commitment === 'finalized').pop()!.id!;
      notify(finalizedSub, bs58.encode(randomBytes(64)), {
        InstructionError: [0, 'x'],
      });
      notify(finalizedSub, bs58.encode(randomBytes(64)), null);
      await until('the unknown signature given up', async () => source.stats().notFound === 1);
      expect(source.stats().notifications, 'the failed transaction is not counted nor fetched').to.equal(1);
      expect(source.stats().transactions).to.equal(0);
      // Quiet but alive: pings answered, no reconnect, the checkpoint moving.
      const cp = source.stats().checkpoint!;
      await until('the checkpoint moving on a quiet socket', async () => source.stats().checkpoint! > cp);
      expect(pings).to.be.greaterThan(0);
      expect(source.stats().sessions).to.equal(sessions);
    } finally {
      ac.abort();
      await running;
    }
    const counts = await db.pool.query(`SELECT count(*)::int AS n FROM receipts WHERE cluster = 'ws-misbehaving'`);
    expect(counts.rows[0].n).to.equal(0);
  });

  it('a node that refuses slotSubscribe: no reconnect loop; subscriptions settle by the processed slot over HTTP', async () => {
    refuseSlots = true;
    const address = Keypair.generate().publicKey.toBase58();
    const real = createRpcClient({ url: net.url });
    const calls: Array<{ method: string; params: unknown[] }> = [];
    const rpc: typeof real = {
      ...real,
      call: (method, params, opts) => {
        calls.push({ method, params: params ?? [] });
        return real.call(method, params, opts);
      },
    };
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
    const ac = new AbortController();
    const source = createWsSource(
      { url, rpc, ledger: createLedger({ db: db.pool }), watched: async () => [address], log },
      { ...QUICK_WS, cluster: 'ws-no-slots', refreshMs: 60_000, checkpointMs: 50 },
    );
    const running = source.run({ signal: ac.signal });
    try {
      await until('subscribed and caught up', async () => source.stats().checkpoint !== null);
      // The settling list: once finality passed the slot read SETTLE_SLOTS_BY_HTTP processed slots later.
      const settled = (): boolean =>
        calls.some(
          (c) =>
            c.method === 'getSignaturesForAddress' &&
            c.params[0] === address &&
            typeof (c.params[1] as { minContextSlot?: unknown }).minContextSlot === 'number',
        );
      await until('the addresses listed again past their subscription', async () => settled());
      const cp = source.stats().checkpoint!;
      await until('the checkpoint moving', async () => source.stats().checkpoint! > cp);
      expect([source.stats().sessions, source.stats().reconnects]).to.deep.equal([1, 0]);
      expect(warnings.filter((w) => /refuses slotSubscribe/.test(w))).to.have.length(1);
      expect(SETTLE_SLOTS_BY_HTTP).to.be.greaterThan(1);
    } finally {
      ac.abort();
      await running;
      refuseSlots = false;
    }
  });
});
