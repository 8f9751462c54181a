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

export async function startGeyserServer(o: GeyserOptions): Promise<GeyserServer> {
  const log = logger('localnet.geyser');
  const chain = o.chain;
  const replaySlots = o.replaySlots ?? DEFAULT_REPLAY_SLOTS;
  const streams = new Set<Stream>();
  let root = chain.finalizedSlot();

  const authorized = (md: grpc.Metadata): boolean =>
    o.xToken === undefined || md.get('x-token').some((v) => String(v) === o.xToken);
  const unauthenticated = { code: grpc.status.UNAUTHENTICATED, details: 'x-token is missing or wrong' };

  const end = (s: Stream, code: grpc.status, details: string): void => {
    if (s.ended) return;
    // What was queued before the end goes out first: the status follows the stream's last update.
    s.out.flush();
    s.out.close();
    s.ended = true;
    streams.delete(s);
    s.call.emit('error', { code, details });
  };
  const send = (s: Stream, u: Omit<SubscribeUpdate, 'createdAt'>): void => {
    if (!s.ended) s.out.push(SubscribeUpdate.encode({ ...u, createdAt: new Date() }).finish());
  };

  const sendBlock = (s: Stream, b: BlockRecord, c: Commitment): void => {
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
          end(s, grpc.status.UNAVAILABLE, 'localnet fault: stream dropped');
      });
    }
    sendSlot(s, b, c);
  };
  const sendSlot = (s: Stream, b: BlockRecord, c: Commitment): void => {
    const f = s.filter;
    if (!f || s.ended) return;
    const names = f.slots.filter((x) => !x.byCommitment || c === f.commitment).map((x) => x.name);
    if (names.length > 0)
      send(s, { filters: names, slot: { slot: String(b.slot), parent: String(b.parentSlot), status: SLOT_STATUS[c] } });
  };

  const firstAvailable = (): number => Math.max(0, chain.tipSlot() - replaySlots + 1);

  /**
   * Blocks from `from` that already reached the stream's commitment, as if they had been streamed live. It respects
   * the transport's backpressure (thousands of retained blocks are not all buffered at once: a full batch is written
   * as soon as it is full, and the replay waits for 'drain'); live blocks are not sent to the stream meanwhile: the
   * replay goes on until it has caught up with them.
   */
  const replay = async (s: Stream, from: number): Promise<void> => {
    s.replaying = true;
    let next = from;
    // Processed / confirmed streams: blocks replayed before they were final get their finalized update here.
    let finalNext = from;
    try {
      for (;;) {
        const c = s.filter?.commitment ?? 'finalized';
        const upTo = c === 'finalized' ? root : chain.tipSlot();
        const slots = chain.blockSlots(next, upTo);
        const finalUpTo = Math.min(root, next - 1);
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
          sendBlock(s, b, c);
          if (c !== 'finalized' && slot <= root) {
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
  };

  const off = chain.subscribe((e: ChainEvent) => {
    if (e.type !== 'slot') return;
    const sealed = chain.getBlock(e.slot);
    const final = chain.blockSlots(root + 1, e.root).flatMap((x) => chain.getBlock(x) ?? []);
    root = Math.max(root, e.root);
    for (const s of [...streams]) {
      if (!s.filter || s.replaying) continue;
      if (sealed) {
        // Localnet executes into the pending slot and seals it confirmed: processed and confirmed see a block at once.
        if (s.filter.commitment !== 'finalized') sendBlock(s, sealed, s.filter.commitment);
        else {
          sendSlot(s, sealed, 'processed');
          sendSlot(s, sealed, 'confirmed');
        }
      }
      for (const b of final) {
        if (s.filter.commitment === 'finalized') sendBlock(s, b, 'finalized');
        else sendSlot(s, b, 'finalized');
      }
    }
  });

  const server = new grpc.Server();
  const handlers: grpc.UntypedServiceImplementation = {
    Subscribe: (call: Call) => {
      const out = createOutbox(http2StreamOf(call));
      const s: Stream = { call, filter: null, dropAfter: null, ended: false, replaying: false, out };
      if (!authorized(call.metadata)) {
        s.ended = true;
        call.emit('error', unauthenticated);
        return;
      }
      streams.add(s);
      // Headers now: tonic (the Rust client under the napi binding) resolves `subscribe` only once they arrive,
      // and grpc-js would otherwise hold them back until the first message.
      call.sendMetadata(new grpc.Metadata());
      const pinger = setInterval(() => send(s, { filters: [], ping: {} }), o.serverPingMs ?? DEFAULT_SERVER_PING_MS);
      pinger.unref();
      const gone = (): void => {
        clearInterval(pinger);
        out.close();
        s.ended = true;
        streams.delete(s);
      };
      call.on('end', () => {
        out.flush();
        gone();
        call.end();
      });
      call.on('cancelled', gone);
      call.on('error', gone);
      call.on('close', gone);
      call.on('data', (req: SubscribeRequest) => {
        if (s.ended) return;
        // A ping is answered and changes nothing else. Any other request replaces the filters (the client opens with
        // an empty one) and, with from_slot, first replays the retained blocks from there.
        if (req.ping) {
          send(s, { filters: [], pong: { id: req.ping.id } });
          return;
        }
        try {
          s.filter = parseFilter(req);
        } catch (e) {
          if (!(e instanceof FilterError)) throw e;
          end(s, grpc.status.INVALID_ARGUMENT, e.message);
          return;
        }
        if (req.fromSlot !== undefined) {
          const from = Number(req.fromSlot);
          const oldest = firstAvailable();
          if (from < oldest) {
            end(s, grpc.status.INVALID_ARGUMENT, `broadcast from ${from} is not available, last available: ${oldest}`);
            return;
          }
          void replay(s, from);
        }
      });
    },
    Ping: (call: grpc.ServerUnaryCall<PingRequest, PongResponse>, cb: grpc.sendUnaryData<PongResponse>) => {
      if (!authorized(call.metadata)) return cb(unauthenticated);
      cb(null, { count: call.request.count });
    },
    GetSlot: (call: grpc.ServerUnaryCall<GetSlotRequest, GetSlotResponse>, cb: grpc.sendUnaryData<GetSlotResponse>) => {
      if (!authorized(call.metadata)) return cb(unauthenticated);
      cb(null, {
        slot: String(chain.slotAt(COMMITMENT_OF[call.request.commitment ?? CommitmentLevel.FINALIZED] ?? 'finalized')),
      });
    },
    GetBlockHeight: (
      call: grpc.ServerUnaryCall<GetBlockHeightRequest, GetBlockHeightResponse>,
      cb: grpc.sendUnaryData<GetBlockHeightResponse>,
    ) => {
      if (!authorized(call.metadata)) return cb(unauthenticated);
      const c = COMMITMENT_OF[call.request.commitment ?? CommitmentLevel.FINALIZED] ?? 'finalized';
      cb(null, { blockHeight: String(chain.blockHeightAt(c)) });
    },
    GetLatestBlockhash: (
      call: grpc.ServerUnaryCall<GetLatestBlockhashRequest, GetLatestBlockhashResponse>,
      cb: grpc.sendUnaryData<GetLatestBlockhashResponse>,
    ) => {
      if (!authorized(call.metadata)) return cb(unauthenticated);
      const b = chain.blockAt(COMMITMENT_OF[call.request.commitment ?? CommitmentLevel.FINALIZED] ?? 'finalized');
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
      if (!authorized(call.metadata)) return cb(unauthenticated);
      cb(null, { slot: String(chain.tipSlot()), valid: chain.isBlockhashValid(call.request.blockhash) });
    },
    GetVersion: (
      call: grpc.ServerUnaryCall<GetVersionRequest, GetVersionResponse>,
      cb: grpc.sendUnaryData<GetVersionResponse>,
    ) => {
      if (!authorized(call.metadata)) return cb(unauthenticated);
      cb(null, { version: JSON.stringify({ version: { package: 'oncepay-localnet-geyser' } }) });
    },
    SubscribeReplayInfo: (
      call: grpc.ServerUnaryCall<SubscribeReplayInfoRequest, SubscribeReplayInfoResponse>,
      cb: grpc.sendUnaryData<SubscribeReplayInfoResponse>,
    ) => {
      if (!authorized(call.metadata)) return cb(unauthenticated);
      cb(null, { firstAvailable: String(firstAvailable()) });
    },
  };
  server.addService(SERVICE, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${o.host}:${o.port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  log.info({ port }, 'geyser gRPC listening');

  return {
    port,
    url: `http://${o.host}:${port}`,
    streams: () => streams.size,
    dropStreams(rule = {}) {
      const n = rule.afterTransactions ?? 0;
      for (const s of [...streams]) {
        if (n <= 0) end(s, grpc.status.UNAVAILABLE, 'localnet fault: stream dropped');
        else s.dropAfter = n;
      }
    },
    async close() {
      off();
      for (const s of [...streams]) end(s, grpc.status.UNAVAILABLE, 'localnet stopping');
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
