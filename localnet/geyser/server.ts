// The Yellowstone gRPC (Geyser) service over the localnet chain, so the real Yellowstone client can be tested
// against it: Subscribe (transactions + slots, commitment, ping/pong, from_slot replay from retained blocks) and
// the unary calls (Ping, GetSlot, GetBlockHeight, GetLatestBlockhash, IsBlockhashValid, GetVersion,
// SubscribeReplayInfo). Messages are the client package's own protobuf codecs; no .proto is loaded.
//
// Order on a stream, per block reaching the stream's commitment: its matching transactions in block order, then
// the block's slot update. A drop fault ends streams with UNAVAILABLE (mid-block when asked to). The updates queued
// in one turn of the event loop leave in one write, as few large HTTP/2 DATA frames (outbox.ts says why).
import * as grpc from '@grpc/grpc-js';
import {
  CommitmentLevel,
  GetBlockHeightRequest,
  GetBlockHeightResponse,
  GetLatestBlockhashRequest,
  GetLatestBlockhashResponse,
  GetSlotRequest,
  GetSlotResponse,
  GetVersionRequest,
  GetVersionResponse,
  IsBlockhashValidRequest,
  IsBlockhashValidResponse,
  PingRequest,
  PongResponse,
  SlotStatus,
  SubscribeReplayInfoRequest,
  SubscribeReplayInfoResponse,
  SubscribeRequest,
  SubscribeUpdate,
} from '@triton-one/yellowstone-grpc';
import { logger } from '../../common/log';
import type { Chain, ChainEvent } from '../chain';
import type { BlockRecord, Commitment } from '../types';
import { allAccountKeys } from '../wire';
import { transactionInfo, wireOfRecord } from './convert';
import { decodeSubscribeRequest } from './request';
import { FilterError, StreamFilter, matchTransaction, parseFilter } from './filter';
import { createOutbox, http2StreamOf, Outbox } from './outbox';

/** Slots of history a stream can resume from with from_slot (Yellowstone's replay buffer). */
export const DEFAULT_REPLAY_SLOTS = 1500;
/** Server pings on an idle-or-not stream, as Yellowstone does, so proxies keep it open. */
export const DEFAULT_SERVER_PING_MS = 15_000;

export interface GeyserOptions {
  chain: Chain;
  host: string;
  port: number;
  /** When set, calls without this `x-token` metadata are refused (UNAUTHENTICATED). */
  xToken?: string;
  replaySlots?: number;
  serverPingMs?: number;
}

export interface GeyserDropRule {
  /** Transaction updates each open stream still sends before it is ended (0 = now). */
  afterTransactions?: number;
}

export interface GeyserServer {
  readonly port: number;
  readonly url: string;
  /** Streams open now. */
  streams(): number;
  /** End every open stream with UNAVAILABLE, now or after a number of transaction updates. */
  dropStreams(rule?: GeyserDropRule): void;
  close(): Promise<void>;
}

interface Codec<T> {
  encode(m: T): { finish(): Uint8Array };
  decode(b: Uint8Array): T;
}
function method<Req, Res>(name: string, req: Codec<Req>, res: Codec<Res>, stream: boolean) {
  return {
    path: `/geyser.Geyser/${name}`,
    requestStream: stream,
    responseStream: stream,
    requestSerialize: (m: Req) => Buffer.from(req.encode(m).finish()),
    requestDeserialize: (b: Buffer) => (name === 'Subscribe' ? (decodeSubscribeRequest(b) as Req) : req.decode(b)),
    responseSerialize: (m: Res) => Buffer.from(res.encode(m).finish()),
    responseDeserialize: (b: Buffer) => res.decode(b),
  };
}
const SERVICE = {
  Subscribe: method('Subscribe', SubscribeRequest, SubscribeUpdate, true),
  Ping: method('Ping', PingRequest, PongResponse, false),
  GetSlot: method('GetSlot', GetSlotRequest, GetSlotResponse, false),
  GetBlockHeight: method('GetBlockHeight', GetBlockHeightRequest, GetBlockHeightResponse, false),
  GetLatestBlockhash: method('GetLatestBlockhash', GetLatestBlockhashRequest, GetLatestBlockhashResponse, false),
  IsBlockhashValid: method('IsBlockhashValid', IsBlockhashValidRequest, IsBlockhashValidResponse, false),
  GetVersion: method('GetVersion', GetVersionRequest, GetVersionResponse, false),
  SubscribeReplayInfo: method('SubscribeReplayInfo', SubscribeReplayInfoRequest, SubscribeReplayInfoResponse, false),
} satisfies grpc.ServiceDefinition;

const SLOT_STATUS: Record<Commitment, SlotStatus> = {
  processed: SlotStatus.SLOT_PROCESSED,
  confirmed: SlotStatus.SLOT_CONFIRMED,
  finalized: SlotStatus.SLOT_FINALIZED,
};
const COMMITMENT_OF: Commitment[] = ['processed', 'confirmed', 'finalized'];

type Call = grpc.ServerDuplexStream<SubscribeRequest, SubscribeUpdate>;

interface Stream {
  call: Call;
  filter: StreamFilter | null;
  /** Transaction updates left before a drop fault ends the stream; null = no fault. */
  dropAfter: number | null;
  ended: boolean;
  /** A from_slot replay is running: live blocks are left to it until it has caught up. */
  replaying: boolean;
  /** Its updates, queued and written a batch per turn of the event loop (few DATA frames, as tonic sends). */
  out: Outbox;
}

/** One service's state: its options, the open streams and the newest finalized slot it has streamed. */
interface GeyserState {
  readonly o: GeyserOptions;
  readonly chain: Chain;
  readonly replaySlots: number;
  readonly streams: Set<Stream>;
  root: number;
}

const UNAUTHENTICATED = { code: grpc.status.UNAUTHENTICATED, details: 'x-token is missing or wrong' };

function authorized(g: GeyserState, md: grpc.Metadata): boolean {
  return g.o.xToken === undefined || md.get('x-token').some((v) => String(v) === g.o.xToken);
}

function end(g: GeyserState, s: Stream, code: grpc.status, details: string): void {
  if (s.ended) return;
  // What was queued before the end goes out first: the status follows the stream's last update.
  s.out.flush();
  s.out.close();
  s.ended = true;
  g.streams.delete(s);
  s.call.emit('error', { code, details });
}

function send(s: Stream, u: Omit<SubscribeUpdate, 'createdAt'>): void {
  if (!s.ended) s.out.push(SubscribeUpdate.encode({ ...u, createdAt: new Date() }).finish());
}

function sendBlock(g: GeyserState, s: Stream, b: BlockRecord, c: Commitment): void {
  const f = s.filter;
  if (!f || s.ended) return;
  if (f.transactions.length > 0) {
    b.txs.forEach((rec, index) => {
      if (s.ended) return;
      const keys = allAccountKeys(wireOfRecord(rec), rec.meta.loadedAddresses);
      const filters = matchTransaction(f, { signature: rec.signature, failed: rec.meta.err !== null, keys });
      if (filters.length === 0) return;
      send(s, { filters, transaction: { slot: String(b.slot), transaction: transactionInfo(rec, index) } });
      if (s.dropAfter !== null && --s.dropAfter <= 0)
        end(g, s, grpc.status.UNAVAILABLE, 'localnet fault: stream dropped');
    });
  }
  sendSlot(s, b, c);
}

function sendSlot(s: Stream, b: BlockRecord, c: Commitment): void {
  const f = s.filter;
  if (!f || s.ended) return;
  const names = f.slots.filter((x) => !x.byCommitment || c === f.commitment).map((x) => x.name);
  if (names.length > 0)
    send(s, { filters: names, slot: { slot: String(b.slot), parent: String(b.parentSlot), status: SLOT_STATUS[c] } });
}

function firstAvailable(g: GeyserState): number {
  return Math.max(0, g.chain.tipSlot() - g.replaySlots + 1);
}

/**
 * Blocks from `from` that already reached the stream's commitment, as if they had been streamed live. It respects
 * the transport's backpressure (thousands of retained blocks are not all buffered at once: a full batch is written
 * as soon as it is full, and the replay waits for 'drain'); live blocks are not sent to the stream meanwhile: the
 * replay goes on until it has caught up with them.
 */
async function replay(g: GeyserState, s: Stream, from: number): Promise<void> {
  const { chain } = g;
  s.replaying = true;
  let next = from;
  // Processed / confirmed streams: blocks replayed before they were final get their finalized update here.
  let finalNext = from;
  try {
    for (;;) {
      const c = s.filter?.commitment ?? 'finalized';
      const upTo = c === 'finalized' ? g.root : chain.tipSlot();
      const slots = chain.blockSlots(next, upTo);
      const finalUpTo = Math.min(g.root, next - 1);
      const finals = c === 'finalized' ? [] : chain.blockSlots(finalNext, finalUpTo);
      if ((slots.length === 0 && finals.length === 0) || s.ended) return;
      for (const slot of finals) {
        const b = chain.getBlock(slot);
        if (b) sendSlot(s, b, 'finalized');
      }
      finalNext = Math.max(finalNext, finalUpTo + 1);
      for (const slot of slots) {
        const b = chain.getBlock(slot);
        next = slot + 1;
        if (!b) continue;
        sendBlock(g, s, b, c);
        if (c !== 'finalized' && slot <= g.root) {
          sendSlot(s, b, 'finalized');
          finalNext = slot + 1;
        }
        const full = s.ended ? null : s.out.backpressure();
        if (full) await full;
        if (s.ended) return;
      }
    }
  } finally {
    // Caught up in this same tick: the next live block goes to the stream as usual.
    s.replaying = false;
  }
}

function onChainEvent(g: GeyserState, e: ChainEvent): void {
  const { chain } = g;
  if (e.type !== 'slot') return;
  const sealed = chain.getBlock(e.slot);
  const final = chain.blockSlots(g.root + 1, e.root).flatMap((x) => chain.getBlock(x) ?? []);
  g.root = Math.max(g.root, e.root);
  for (const s of [...g.streams]) {
    if (!s.filter || s.replaying) continue;
    if (sealed) {
      // Localnet executes into the pending slot and seals it confirmed: processed and confirmed see a block at once.
      if (s.filter.commitment !== 'finalized') sendBlock(g, s, sealed, s.filter.commitment);
      else {
        sendSlot(s, sealed, 'processed');
        sendSlot(s, sealed, 'confirmed');
      }
    }
    for (const b of final) {
      if (s.filter.commitment === 'finalized') sendBlock(g, s, b, 'finalized');
      else sendSlot(s, b, 'finalized');
    }
  }
}

/**
 * A request on an open Subscribe stream. A ping is answered and changes nothing else. Any other request replaces the
 * filters (the client opens with an empty one) and, with from_slot, first replays the retained blocks from there.
 */
function onSubscribeRequest(g: GeyserState, s: Stream, req: SubscribeRequest): void {
  if (s.ended) return;
  if (req.ping) {
    send(s, { filters: [], pong: { id: req.ping.id } });
    return;
  }
  try {
    s.filter = parseFilter(req);
  } catch (e) {
    if (!(e instanceof FilterError)) throw e;
    end(g, s, grpc.status.INVALID_ARGUMENT, e.message);
    return;
  }
  if (req.fromSlot !== undefined) {
    const from = Number(req.fromSlot);
    const oldest = firstAvailable(g);
    if (from < oldest) {
      end(g, s, grpc.status.INVALID_ARGUMENT, `broadcast from ${from} is not available, last available: ${oldest}`);
      return;
    }
    void replay(g, s, from);
  }
}

function subscribe(g: GeyserState, call: Call): void {
  const out = createOutbox(http2StreamOf(call));
  const s: Stream = { call, filter: null, dropAfter: null, ended: false, replaying: false, out };
  if (!authorized(g, call.metadata)) {
    s.ended = true;
    call.emit('error', UNAUTHENTICATED);
    return;
  }
  g.streams.add(s);
  // Headers now: tonic (the Rust client under the napi binding) resolves `subscribe` only once they arrive,
  // and grpc-js would otherwise hold them back until the first message.
  call.sendMetadata(new grpc.Metadata());
  const pinger = setInterval(() => send(s, { filters: [], ping: {} }), g.o.serverPingMs ?? DEFAULT_SERVER_PING_MS);
  pinger.unref();
  const gone = (): void => {
    clearInterval(pinger);
    out.close();
    s.ended = true;
    g.streams.delete(s);
  };
  call.on('end', () => {
    out.flush();
    gone();
    call.end();
  });
  call.on('cancelled', gone);
  call.on('error', gone);
  call.on('close', gone);
  call.on('data', (req: SubscribeRequest) => onSubscribeRequest(g, s, req));
}

function commitmentOf(c: CommitmentLevel | undefined): Commitment {
  return COMMITMENT_OF[c ?? CommitmentLevel.FINALIZED] ?? 'finalized';
}

/** The unary calls, each refused without the x-token when one is set. */
function unaryHandlers(g: GeyserState): grpc.UntypedServiceImplementation {
  const { chain } = g;
  return {
    Ping: (call: grpc.ServerUnaryCall<PingRequest, PongResponse>, cb: grpc.sendUnaryData<PongResponse>) => {
      if (!authorized(g, call.metadata)) return cb(UNAUTHENTICATED);
      cb(null, { count: call.request.count });
    },
    GetSlot: (call: grpc.ServerUnaryCall<GetSlotRequest, GetSlotResponse>, cb: grpc.sendUnaryData<GetSlotResponse>) => {
      if (!authorized(g, call.metadata)) return cb(UNAUTHENTICATED);
      cb(null, { slot: String(chain.slotAt(commitmentOf(call.request.commitment))) });
    },
    GetBlockHeight: (
      call: grpc.ServerUnaryCall<GetBlockHeightRequest, GetBlockHeightResponse>,
      cb: grpc.sendUnaryData<GetBlockHeightResponse>,
    ) => {
      if (!authorized(g, call.metadata)) return cb(UNAUTHENTICATED);
      cb(null, { blockHeight: String(chain.blockHeightAt(commitmentOf(call.request.commitment))) });
    },
    GetLatestBlockhash: (
      call: grpc.ServerUnaryCall<GetLatestBlockhashRequest, GetLatestBlockhashResponse>,
      cb: grpc.sendUnaryData<GetLatestBlockhashResponse>,
    ) => {
      if (!authorized(g, call.metadata)) return cb(UNAUTHENTICATED);
      const b = chain.blockAt(commitmentOf(call.request.commitment));
      cb(null, {
        slot: String(b.slot),
        blockhash: b.blockhash,
        lastValidBlockHeight: String(chain.lastValidBlockHeight(b.blockhash) ?? b.blockHeight),
      });
    },
    IsBlockhashValid: (
      call: grpc.ServerUnaryCall<IsBlockhashValidRequest, IsBlockhashValidResponse>,
      cb: grpc.sendUnaryData<IsBlockhashValidResponse>,
    ) => {
      if (!authorized(g, call.metadata)) return cb(UNAUTHENTICATED);
      cb(null, { slot: String(chain.tipSlot()), valid: chain.isBlockhashValid(call.request.blockhash) });
    },
    GetVersion: (
      call: grpc.ServerUnaryCall<GetVersionRequest, GetVersionResponse>,
      cb: grpc.sendUnaryData<GetVersionResponse>,
    ) => {
      if (!authorized(g, call.metadata)) return cb(UNAUTHENTICATED);
      cb(null, { version: JSON.stringify({ version: { package: 'oncepay-localnet-geyser' } }) });
    },
    SubscribeReplayInfo: (
      call: grpc.ServerUnaryCall<SubscribeReplayInfoRequest, SubscribeReplayInfoResponse>,
      cb: grpc.sendUnaryData<SubscribeReplayInfoResponse>,
    ) => {
      if (!authorized(g, call.metadata)) return cb(UNAUTHENTICATED);
      cb(null, { firstAvailable: String(firstAvailable(g)) });
    },
  };
}

export async function startGeyserServer(o: GeyserOptions): Promise<GeyserServer> {
  const log = logger('localnet.geyser');
  const g: GeyserState = {
    o,
    chain: o.chain,
    replaySlots: o.replaySlots ?? DEFAULT_REPLAY_SLOTS,
    streams: new Set(),
    root: o.chain.finalizedSlot(),
  };
  const off = o.chain.subscribe((e: ChainEvent) => onChainEvent(g, e));

  const server = new grpc.Server();
  server.addService(SERVICE, { Subscribe: (call: Call) => subscribe(g, call), ...unaryHandlers(g) });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${o.host}:${o.port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  log.info({ port }, 'geyser gRPC listening');

  return {
    port,
    url: `http://${o.host}:${port}`,
    streams: () => g.streams.size,
    dropStreams(rule = {}) {
      const n = rule.afterTransactions ?? 0;
      for (const s of [...g.streams]) {
        if (n <= 0) end(g, s, grpc.status.UNAVAILABLE, 'localnet fault: stream dropped');
        else s.dropAfter = n;
      }
    },
    async close() {
      off();
      for (const s of [...g.streams]) end(g, s, grpc.status.UNAVAILABLE, 'localnet stopping');
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 500);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      });
    },
  };
}
