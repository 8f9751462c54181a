// HTTP + JSON-RPC dispatch (single and batch), the admin fault endpoints, /metrics, and websocket upgrades.
// Plain node:http rather than fastify: fault injection needs the raw socket (destroy it after executing).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { logger } from '../common/log';
import type { Chain } from './chain';
import type { ResponseFaults } from './faults';
import { stringifyRpc } from './json';
import { METHODS } from './methods';
import { RPC, RpcError } from './rpc-error';
import { Subscriptions, createSubscriptions } from './ws';

const MAX_BODY = 50 * 1024 * 1024;

export interface RpcServerOptions {
  chain: Chain;
  faults: ResponseFaults;
  host: string;
  port: number;
  /** Also serve websockets on port+1, where web3.js looks by default (best effort). */
  wsOnNextPort: boolean;
  /** Admin actions of another part of the localnet (the geyser service); undefined = not one of them. */
  extraAdmin?: (action: string, body: Record<string, unknown>) => unknown;
}

export interface RpcServer {
  port: number;
  wsPort: number;
  registry: Registry;
  /** End every open websocket abruptly (a fault); returns how many. */
  dropWebsockets(): number;
  close(): Promise<void>;
}

type JsonRpcRequest = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };

function dispatchOne(
  chain: Chain,
  req: JsonRpcRequest,
  m: { requests: Counter; errors: Counter },
  forget: { unseen: boolean } | null = null,
): unknown | undefined {
  const hasId = req !== null && typeof req === 'object' && 'id' in req;
  const id = hasId ? req.id : null;
  const error = (code: number, message: string, data?: unknown): unknown => ({
    jsonrpc: '2.0',
    error: data === undefined ? { code, message } : { code, message, data },
    id,
  });
  if (
    req === null ||
    typeof req !== 'object' ||
    Array.isArray(req) ||
    req.jsonrpc !== '2.0' ||
    typeof req.method !== 'string'
  ) {
    return error(RPC.INVALID_REQUEST, 'Invalid request');
  }
  const method = req.method;
  const handler = Object.prototype.hasOwnProperty.call(METHODS, method) ? METHODS[method] : undefined;
  m.requests.inc({ method: handler ? method : 'unknown' });
  if (!handler) return hasId ? error(RPC.METHOD_NOT_FOUND, 'Method not found') : undefined;
  if (req.params !== undefined && !Array.isArray(req.params)) {
    return error(RPC.INVALID_PARAMS, 'Invalid params: invalid type: map, expected a sequence');
  }
  try {
    const ctx = { chain, historyless: forget !== null, unseen: forget?.unseen === true };
    const result = handler(ctx, (req.params as unknown[] | undefined) ?? []);
    return hasId ? { jsonrpc: '2.0', result, id } : undefined;
  } catch (e) {
    if (e instanceof RpcError) {
      m.errors.inc({ method, code: String(e.code) });
      return error(e.code, e.message, e.data);
    }
    m.errors.inc({ method, code: String(RPC.INTERNAL) });
    logger('localnet.rpc').error({ err: e, method }, 'rpc handler failed');
    return error(RPC.INTERNAL, 'Internal error');
  }
}

function readBody(req: http.IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

interface RpcMetrics {
  requests: Counter;
  errors: Counter;
  faultsInjected: Counter;
  /** Stops counting the chain's blocks and transactions. */
  off: () => void;
}

function createMetrics(registry: Registry, chain: Chain): RpcMetrics {
  const requests = new Counter({
    name: 'oncepay_localnet_rpc_requests_total',
    help: 'JSON-RPC calls by method',
    labelNames: ['method'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'oncepay_localnet_rpc_errors_total',
    help: 'JSON-RPC error answers by method and code',
    labelNames: ['method', 'code'],
    registers: [registry],
  });
  const faultsInjected = new Counter({
    name: 'oncepay_localnet_faults_injected_total',
    help: 'Injected faults by kind',
    labelNames: ['kind'],
    registers: [registry],
  });
  new Gauge({
    name: 'oncepay_localnet_slot',
    help: 'Tip slot',
    registers: [registry],
    collect() {
      this.set(chain.tipSlot());
    },
  });
  const landed = new Counter({
    name: 'oncepay_localnet_transactions_total',
    help: 'Transactions landed (executed into a slot)',
    registers: [registry],
  });
  const blocksMade = new Counter({
    name: 'oncepay_localnet_blocks_total',
    help: 'Blocks sealed',
    registers: [registry],
  });
  new Gauge({
    name: 'oncepay_localnet_finalized_slot',
    help: 'Finalized slot',
    registers: [registry],
    collect() {
      this.set(chain.finalizedSlot());
    },
  });
  const off = chain.subscribe((e) => {
    if (e.type === 'slot') blocksMade.inc();
    else if (e.commitment === 'processed') landed.inc();
  });
  return { requests, errors, faultsInjected, off };
}

/** What a request handler needs: the options, the metrics, and the timers of delayed faults. */
interface ServerState {
  readonly o: RpcServerOptions;
  readonly log: Logger;
  readonly registry: Registry;
  readonly metrics: RpcMetrics;
  readonly timers: Set<NodeJS.Timeout>;
}

function later(s: ServerState, ms: number, fn: () => void): void {
  const t = setTimeout(() => {
    s.timers.delete(t);
    fn();
  }, ms);
  s.timers.add(t);
}

function send(res: http.ServerResponse, status: number, body: string, type = 'application/json'): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function admin(o: RpcServerOptions, action: string, body: Record<string, unknown>): unknown {
  switch (action) {
    case 'drop-next-responses':
      o.faults.dropNextResponses(body as never);
      return { ok: true };
    case 'fail-next':
      o.faults.failNext(body as never);
      return { ok: true };
    case 'forget-history':
      o.faults.forgetHistory(body as never);
      return { ok: true };
    case 'skip-slot':
      o.chain.skipSlot(Number(body.slot));
      return { ok: true };
    case 'expire-blockhashes':
      o.chain.expireBlockhashesNow();
      return { ok: true, slot: o.chain.tipSlot() };
    case 'advance-slots':
      o.chain.advance(Number(body.n ?? 1));
      return { ok: true, slot: o.chain.tipSlot() };
    case 'clear-faults':
      o.faults.clear();
      return { ok: true };
    default: {
      const answer = o.extraAdmin?.(action, body);
      if (answer !== undefined) return answer;
      throw new RpcError(RPC.METHOD_NOT_FOUND, `unknown admin action ${action}`);
    }
  }
}

/** An injected 429, 500 or timeout answers (or not) in place of the calls; true when one was taken. */
function injectFailure(
  s: ServerState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  calls: JsonRpcRequest[],
  methods: string[],
): boolean {
  const failure = s.o.faults.takeFailure(methods);
  if (!failure) return false;
  s.metrics.faultsInjected.inc({ kind: failure.kind });
  s.log.info({ kind: failure.kind, methods }, 'injecting failure');
  if (failure.kind === '429') {
    const ids = calls.map((c) => c?.id ?? null);
    send(
      res,
      429,
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: 429, message: 'Too many requests for a specific RPC call' },
        id: ids[0],
      }),
    );
    return true;
  }
  if (failure.kind === '500') {
    send(res, 500, 'Internal Server Error', 'text/plain');
    return true;
  }
  // timeout: nothing executes, nothing answers; the socket dies later.
  later(s, failure.delayMs, () => req.socket.destroy());
  return true;
}

/** The answer body to a single call or a batch ('' for a lone notification). */
function answerCalls(s: ServerState, parsed: unknown, calls: JsonRpcRequest[], methods: string[]): string {
  const forget = s.o.faults.takeForget(methods);
  if (forget) {
    s.metrics.faultsInjected.inc({ kind: 'forget' });
    s.log.info({ methods, unseen: forget.unseen }, 'answering without the transaction history');
  }
  const m = { requests: s.metrics.requests, errors: s.metrics.errors };
  if (Array.isArray(parsed)) {
    if (calls.length === 0)
      return JSON.stringify({
        jsonrpc: '2.0',
        error: { code: RPC.INVALID_REQUEST, message: 'Invalid request' },
        id: null,
      });
    return stringifyRpc(calls.map((c) => dispatchOne(s.o.chain, c, m, forget)).filter((x) => x !== undefined));
  }
  const r = dispatchOne(s.o.chain, parsed as JsonRpcRequest, m, forget);
  return r === undefined ? '' : stringifyRpc(r);
}

async function handle(s: ServerState, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  if (req.method === 'GET' && url === '/health') return send(res, 200, 'ok', 'text/plain');
  if (req.method === 'GET' && url === '/metrics')
    return send(res, 200, await s.registry.metrics(), s.registry.contentType);
  if (req.method !== 'POST')
    return send(res, 405, 'Used HTTP Method is not allowed. POST or OPTIONS is required', 'text/plain');
  const body = await readBody(req);
  if (body === null) return send(res, 413, 'Payload Too Large', 'text/plain');
  if (url.startsWith('/admin/')) {
    try {
      const parsed = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
      return send(res, 200, stringifyRpc(admin(s.o, url.slice('/admin/'.length), parsed)));
    } catch (e) {
      return send(res, 400, JSON.stringify({ error: (e as Error).message }));
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return send(
      res,
      200,
      JSON.stringify({ jsonrpc: '2.0', error: { code: RPC.PARSE_ERROR, message: 'Parse error' }, id: null }),
    );
  }
  const calls = Array.isArray(parsed) ? (parsed as JsonRpcRequest[]) : [parsed as JsonRpcRequest];
  const methods = calls.map((c) => (c && typeof c === 'object' && typeof c.method === 'string' ? c.method : ''));
  if (injectFailure(s, req, res, calls, methods)) return;
  const out = answerCalls(s, parsed, calls, methods);
  const drop = s.o.faults.takeDrop(methods);
  if (drop) {
    s.metrics.faultsInjected.inc({ kind: drop.mode });
    s.log.info({ mode: drop.mode, methods }, 'dropping response after execution');
    if (drop.mode === 'drop') {
      req.socket.destroy();
      return;
    }
    later(s, drop.delayMs, () => send(res, 200, out));
    return;
  }
  send(res, 200, out);
}

function listen(srv: http.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => {
      srv.off('error', reject);
      resolve((srv.address() as AddressInfo).port);
    });
  });
}

function createHttpServer(onRequest: http.RequestListener, subs: Subscriptions): http.Server {
  const srv = http.createServer(onRequest);
  // Long keep-alive: a client whose event loop was busy past a short timeout would reuse a socket we closed.
  srv.keepAliveTimeout = 65_000;
  srv.headersTimeout = 66_000;
  srv.on('upgrade', (req, socket, head) => subs.handleUpgrade(req, socket as never, head));
  return srv;
}

function closeServer(srv: http.Server): Promise<void> {
  return new Promise((resolve) => {
    srv.close(() => resolve());
    srv.closeAllConnections();
  });
}

/** Websockets on port+1 too (best effort): the server and its port, or null when that port is taken. */
async function listenNextPort(
  s: ServerState,
  onRequest: http.RequestListener,
  subs: Subscriptions,
  port: number,
): Promise<{ server: http.Server; port: number } | null> {
  const srv = createHttpServer(onRequest, subs);
  try {
    return { port: await listen(srv, s.o.host, port + 1), server: srv };
  } catch (err) {
    s.log.warn(
      { port: port + 1, err: (err as Error).message },
      'websocket port+1 unavailable; websockets stay on the RPC port',
    );
    return null;
  }
}

export async function startRpcServer(o: RpcServerOptions): Promise<RpcServer> {
  const log = logger('localnet.server');
  const registry = new Registry();
  const metrics = createMetrics(registry, o.chain);
  const subs = createSubscriptions(o.chain);
  const s: ServerState = { o, log, registry, metrics, timers: new Set() };

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    handle(s, req, res).catch((err) => {
      log.error({ err }, 'request failed');
      send(res, 500, 'Internal Server Error', 'text/plain');
    });
  };
  const main = createHttpServer(onRequest, subs);
  const port = await listen(main, o.host, o.port);
  const next = o.wsOnNextPort && port < 65535 ? await listenNextPort(s, onRequest, subs, port) : null;
  const wsServer = next?.server ?? null;
  const wsPort = next?.port ?? port;

  return {
    port,
    wsPort,
    registry,
    dropWebsockets: () => subs.dropAll(),
    async close() {
      metrics.off();
      for (const t of s.timers) clearTimeout(t);
      s.timers.clear();
      subs.close();
      await Promise.all([closeServer(main), wsServer ? closeServer(wsServer) : Promise.resolve()]);
      // Let in-process clients see the FIN of their kept-alive sockets before anyone listens on this port again;
      // otherwise their pool reuses a dead socket and the first request after a restart fails.
      await new Promise((r) => setTimeout(r, 25));
    },
  };
}
