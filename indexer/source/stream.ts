// The subscription source over Yellowstone gRPC (Geyser): one Subscribe stream at the chosen commitment, filtered
// to the watched deposit accounts (and their associated token accounts) per program (SPL Token, Token-2022,
// System). Transactions are decoded as they arrive; a slot's receipts go to the ledger when that slot's own
// FINALIZED update arrives, together with the (cluster, 'stream') checkpoint, in one ledger transaction — the same
// path as the scanner, so a receipt already delivered by any source is counted a duplicate, never credited twice.
// With `confirmed`, receipts are also kept as provisional rows at once and settled as the checkpoint passes them.
//
// Any failure (stream error, idle stream, database away) ends the session; the next one starts after a backoff
// with jitter, from `from_slot` = the durable checkpoint, so what was buffered and lost is streamed again.
// A slot's receipts wait in stream-settler.ts for its FINALIZED update; this is the session around it.
import {
  CommitmentLevel,
  SlotStatus,
  SubscribeRequest,
  SubscribeRequestFilterTransactions,
  SubscribeUpdate,
  SubscribeUpdateTransactionInfo,
  txEncode,
} from '@triton-one/yellowstone-grpc';
import bs58 from 'bs58';
import { decodeTransaction, parseJsonExact, type Receipt } from '../decode';
import { SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from '../decode/programs';
import {
  createSubscriptionSink,
  onStop,
  runSessions,
  SessionCounts,
  sessionCounts,
  SubscriptionDeps,
} from './subscription-sink';
import { NO_METRICS, type SourceMetrics, toSlotNumber } from './ports';
import { DEFAULT_STREAM, STREAM_SOURCE, type StreamOptions } from './stream-options';
import { createStreamSettler, holdReceipts, type PendingSlots, type StreamSettler } from './stream-settler';

export { DEFAULT_STREAM, STREAM_SOURCE, type StreamOptions };

export type { GeyserClient } from './stream-options';
import type { GeyserClient } from './stream-options';
import { OncepayError, SOURCE_CODES } from '../../common/errors';

export type { ProvisionalPort } from './subscription-sink';

export interface StreamDeps extends SubscriptionDeps {
  /** A new, unconnected client per session. */
  client: () => GeyserClient;
}

export interface StreamStats extends SessionCounts {
  /** Resumes that had to start after the checkpoint (the server's history did not reach back to it). */
  gaps: number;
}

const PROGRAMS: Record<string, string> = { spl: TOKEN_PROGRAM, token2022: TOKEN_2022_PROGRAM, system: SYSTEM_PROGRAM };

/** The Subscribe request: per program, transactions naming it and any watched address; every slot update. */
export function streamRequest(watched: readonly string[], commitment: StreamOptions['commitment']): SubscribeRequest {
  const transactions: Record<string, SubscribeRequestFilterTransactions> = {};
  // No watched address: no transactions filter at all (an empty account_include would match every transaction).
  if (watched.length > 0) {
    for (const [name, program] of Object.entries(PROGRAMS)) {
      transactions[name] = {
        vote: false,
        failed: false,
        accountInclude: [...watched],
        accountExclude: [],
        accountRequired: [program],
      };
    }
  }
  return {
    accounts: {},
    slots: { slots: { filterByCommitment: false } },
    transactions,
    transactionsStatus: {},
    blocks: {},
    blocksMeta: {},
    entry: {},
    accountsDataSlice: [],
    commitment: commitment === 'confirmed' ? CommitmentLevel.CONFIRMED : CommitmentLevel.FINALIZED,
  };
}

/** A streamed transaction → receipts, through the same decoder as getTransaction results (Agave's own encoder). */
export function decodeStreamedTransaction(
  info: SubscribeUpdateTransactionInfo,
  slot: number,
  cluster: string,
): Receipt[] {
  const text = txEncode.encode_raw(
    SubscribeUpdateTransactionInfo.encode(info).finish(),
    txEncode.encoding.Json,
    0,
    false,
  );
  const tx = parseJsonExact(text) as Record<string, unknown>;
  return decodeTransaction({ ...tx, slot, blockTime: null }, { cluster });
}

/** What every session of one source shares. */
interface StreamContext {
  deps: StreamDeps;
  o: StreamOptions;
  stats: StreamStats;
  sink: ReturnType<typeof createSubscriptionSink>;
  settler: StreamSettler;
  metrics: SourceMetrics;
}

type SubscribeStream = Awaited<ReturnType<GeyserClient['subscribe']>>;

/** What a session's timers read and the refresh changes: the watched set sent last, when a message came last. */
interface Live {
  watched: string[];
  lastMessage: number;
}

/**
 * Connect and subscribe from the checkpoint itself (else `fromSlot`, else live), or from the server's oldest slot
 * when its history does not reach back that far (counted as a gap).
 */
async function openStream(cx: StreamContext, live: Live) {
  const { deps, o, stats } = cx;
  const log = deps.log;
  const checkpoint = toSlotNumber(await deps.ledger.getCheckpoint(o.cluster, STREAM_SOURCE));
  stats.checkpoint = checkpoint;
  // From the checkpoint itself, not the slot after: a server may send a slot's update before the last of its
  // transactions; reading one slot again costs only duplicates.
  let from = checkpoint ?? o.fromSlot;
  live.watched = [...new Set(await deps.watched())].sort();
  const client = deps.client();
  await client.connect();
  if (from !== undefined) {
    // Down longer than the server keeps history: go on from what it has; the scanner covers the gap.
    const first = Number((await client.subscribeReplayInfo()).firstAvailable ?? 0);
    if (from < first) {
      log?.error(
        { from, firstAvailable: first },
        'slots before firstAvailable cannot be streamed again; the scanner covers them',
      );
      stats.gaps++;
      from = first;
    }
  }
  const stream = await client.subscribe();
  stats.sessions++;
  const write = (req: SubscribeRequest): void => {
    stream.write(req as never);
  };
  write({ ...streamRequest(live.watched, o.commitment), ...(from === undefined ? {} : { fromSlot: String(from) }) });
  log?.info({ from: from ?? null, watched: live.watched.length, commitment: o.commitment }, 'stream subscribed');
  return { stream, write };
}

/** The session's timers: the keep-alive ping, the idle watchdog and the refresh of the watched addresses. */
function startTimers(
  cx: StreamContext,
  live: Live,
  stream: SubscribeStream,
  write: (req: SubscribeRequest) => void,
): NodeJS.Timeout[] {
  const { deps, o } = cx;
  let pingId = 0;
  return [
    setInterval(() => write({ ...streamRequest(live.watched, o.commitment), ping: { id: ++pingId } }), o.pingMs),
    setInterval(
      () => {
        if (Date.now() - live.lastMessage > o.idleTimeoutMs)
          stream.destroy(new OncepayError(SOURCE_CODES.STREAM_IDLE, 'stream idle: no message, not even a ping'));
      },
      Math.min(1000, o.idleTimeoutMs),
    ),
    setInterval(() => {
      deps
        .watched()
        .then((next) => {
          const sorted = [...new Set(next)].sort();
          if (sorted.join() === live.watched.join()) return;
          live.watched = sorted;
          write(streamRequest(live.watched, o.commitment));
          deps.log?.info({ watched: live.watched.length }, 'stream filters updated');
        })
        .catch((e) => deps.log?.warn({ err: (e as Error).message }, 'could not read the watched addresses'));
    }, o.refreshMs),
  ];
}

/** The stream's updates until it ends: transactions held per slot (and kept provisional), finalized slots applied. */
async function consume(cx: StreamContext, live: Live, stream: SubscribeStream, onProgress: () => void): Promise<void> {
  const { o, stats, sink, settler, metrics } = cx;
  const pending: PendingSlots = new Map();
  let tip = 0;
  for await (const u of stream as AsyncIterable<SubscribeUpdate>) {
    live.lastMessage = Date.now();
    if (u.transaction?.transaction) {
      const slot = Number(u.transaction.slot);
      tip = Math.max(tip, slot);
      stats.transactions++;
      const receipts = decodeUpdate(cx, u.transaction.transaction, slot);
      holdReceipts(pending, slot, receipts);
      await sink.provisional(receipts.map((receipt) => ({ slot, receipt })));
    } else if (u.slot) {
      const slot = Number(u.slot.slot);
      tip = Math.max(tip, slot);
      if (u.slot.status !== SlotStatus.SLOT_FINALIZED) continue;
      await settler.applyFinalized(slot, pending);
      onProgress();
      if (stats.checkpoint !== null)
        metrics.setCheckpointLag(o.cluster, STREAM_SOURCE, Math.max(0, tip - stats.checkpoint));
    }
  }
}

/** A streamed transaction's receipts, or none when the decoder refuses it (the sink logs and counts that). */
function decodeUpdate(cx: StreamContext, info: SubscribeUpdateTransactionInfo, slot: number): Receipt[] {
  return cx.sink.decode(() => decodeStreamedTransaction(info, slot, cx.o.cluster), {
    signature: bs58.encode(info.signature),
    slot,
  });
}

/** One connection: returns when `signal` aborts, throws when the stream fails. */
async function session(cx: StreamContext, signal: AbortSignal, onProgress: () => void): Promise<void> {
  const live: Live = { watched: [], lastMessage: Date.now() };
  const { stream, write } = await openStream(cx, live);
  live.lastMessage = Date.now();
  const timers = startTimers(cx, live, stream, write);
  const unlisten = onStop(signal, () => stream.destroy());
  try {
    await consume(cx, live, stream, onProgress);
    if (!signal.aborted) throw new OncepayError(SOURCE_CODES.STREAM_ENDED, 'stream ended by the server');
    await cx.settler.flush();
  } catch (e) {
    if (signal.aborted) {
      // Graceful stop: the empty finalized slots seen last still move the checkpoint.
      await cx.settler
        .flush()
        .catch((err) => cx.deps.log?.warn({ err: (err as Error).message }, 'last checkpoint not written'));
      return;
    }
    throw e;
  } finally {
    unlisten();
    for (const t of timers) clearInterval(t);
    stream.destroy();
  }
}

export function createStreamSource(deps: StreamDeps, options: Pick<StreamOptions, 'cluster'> & Partial<StreamOptions>) {
  const o = { ...DEFAULT_STREAM, ...options };
  const metrics = deps.metrics ?? NO_METRICS;
  const stats: StreamStats = { ...sessionCounts(), gaps: 0 };
  const sink = createSubscriptionSink(
    deps,
    { cluster: o.cluster, source: STREAM_SOURCE, commitment: o.commitment },
    stats,
  );
  const settler = createStreamSettler({ sink, metrics, cluster: o.cluster, checkpointMs: o.checkpointMs, stats });
  const cx: StreamContext = { deps, o, stats, sink, settler, metrics };

  async function run({ signal }: { signal: AbortSignal }): Promise<StreamStats> {
    await runSessions(signal, (s, onProgress) => session(cx, s, onProgress), {
      backoff: o.backoff,
      kind: 'stream',
      stats,
      log: deps.log,
      metrics,
    });
    return stats;
  }

  return { run, stats: () => ({ ...stats }) };
}
