// The subscription source over Yellowstone gRPC (Geyser): one Subscribe stream at the chosen commitment, filtered
// to the watched deposit accounts (and their associated token accounts) per program (SPL Token, Token-2022,
// System). Transactions are decoded as they arrive; a slot's receipts go to the ledger when that slot's own
// FINALIZED update arrives, together with the (cluster, 'stream') checkpoint, in one ledger transaction — the same
// path as the scanner, so a receipt already delivered by any source is counted a duplicate, never credited twice.
// With `confirmed`, receipts are also kept as provisional rows at once and settled as the checkpoint passes them.
//
// Any failure (stream error, idle stream, database away) ends the session; the next one starts after a backoff
// with jitter, from `from_slot` = the durable checkpoint, so what was buffered and lost is streamed again.
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
import { NO_METRICS, toSlotNumber } from './ports';
import { DEFAULT_STREAM, STREAM_SOURCE, type StreamOptions } from './stream-options';

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

export function createStreamSource(deps: StreamDeps, options: Pick<StreamOptions, 'cluster'> & Partial<StreamOptions>) {
  const o = { ...DEFAULT_STREAM, ...options };
  const log = deps.log;
  const metrics = deps.metrics ?? NO_METRICS;
  const stats: StreamStats = { ...sessionCounts(), gaps: 0 };
  const sink = createSubscriptionSink(
    deps,
    { cluster: o.cluster, source: STREAM_SOURCE, commitment: o.commitment },
    stats,
  );

  /** One connection: returns when `signal` aborts, throws when the stream fails. */
  async function session(signal: AbortSignal, onProgress: () => void): Promise<void> {
    const checkpoint = toSlotNumber(await deps.ledger.getCheckpoint(o.cluster, STREAM_SOURCE));
    stats.checkpoint = checkpoint;
    // From the checkpoint itself, not the slot after: a server may send a slot's update before the last of its
    // transactions; reading one slot again costs only duplicates.
    let from = checkpoint ?? o.fromSlot;
    let watched = [...new Set(await deps.watched())].sort();
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
    write({ ...streamRequest(watched, o.commitment), ...(from === undefined ? {} : { fromSlot: String(from) }) });
    log?.info({ from: from ?? null, watched: watched.length, commitment: o.commitment }, 'stream subscribed');

    let lastMessage = Date.now();
    let pingId = 0;
    const timers = [
      setInterval(() => write({ ...streamRequest(watched, o.commitment), ping: { id: ++pingId } }), o.pingMs),
      setInterval(
        () => {
          if (Date.now() - lastMessage > o.idleTimeoutMs)
            stream.destroy(new OncepayError(SOURCE_CODES.STREAM_IDLE, 'stream idle: no message, not even a ping'));
        },
        Math.min(1000, o.idleTimeoutMs),
      ),
      setInterval(() => {
        deps
          .watched()
          .then((next) => {
            const sorted = [...new Set(next)].sort();
            if (sorted.join() === watched.join()) return;
            watched = sorted;
            write(streamRequest(watched, o.commitment));
            log?.info({ watched: watched.length }, 'stream filters updated');
          })
          .catch((e) => log?.warn({ err: (e as Error).message }, 'could not read the watched addresses'));
      }, o.refreshMs),
    ];
    const unlisten = onStop(signal, () => stream.destroy());

    /** Receipts per confirmed slot, waiting for that slot's FINALIZED update. */
    const pending = new Map<number, Receipt[]>();
    let tip = 0;
    try {
      for await (const u of stream as AsyncIterable<SubscribeUpdate>) {
        lastMessage = Date.now();
        if (u.transaction?.transaction) {
          const slot = Number(u.transaction.slot);
          tip = Math.max(tip, slot);
          stats.transactions++;
          const receipts = decode(u.transaction.transaction, slot);
          const list = pending.get(slot) ?? [];
          list.push(...receipts);
          pending.set(slot, list);
          await sink.provisional(receipts.map((receipt) => ({ slot, receipt })));
        } else if (u.slot) {
          const slot = Number(u.slot.slot);
          tip = Math.max(tip, slot);
          if (u.slot.status !== SlotStatus.SLOT_FINALIZED) continue;
          await applyFinalized(slot, pending);
          onProgress();
          if (stats.checkpoint !== null)
            metrics.setCheckpointLag(o.cluster, STREAM_SOURCE, Math.max(0, tip - stats.checkpoint));
        }
      }
      if (!signal.aborted) throw new OncepayError(SOURCE_CODES.STREAM_ENDED, 'stream ended by the server');
      await flushCheckpoint();
    } catch (e) {
      if (signal.aborted) {
        // Graceful stop: the empty finalized slots seen last still move the checkpoint.
        await flushCheckpoint().catch((err) =>
          log?.warn({ err: (err as Error).message }, 'last checkpoint not written'),
        );
        return;
      }
      throw e;
    } finally {
      unlisten();
      for (const t of timers) clearInterval(t);
      stream.destroy();
    }
  }

  function decode(info: SubscribeUpdateTransactionInfo, slot: number): Receipt[] {
    return sink.decode(() => decodeStreamedTransaction(info, slot, o.cluster), {
      signature: bs58.encode(info.signature),
      slot,
    });
  }

  /** A finalized slot with nothing to credit, not yet written: its checkpoint waits for the next write. */
  let unwritten: number | null = null;
  let lastWrite = 0;

  async function applyFinalized(slot: number, pending: Map<number, Receipt[]>): Promise<void> {
    const receipts = pending.get(slot) ?? [];
    // Confirmed slots below a finalized one that never got their own FINALIZED update were not on the finalized
    // fork: their receipts are dropped (their provisional rows settle as reversed).
    for (const s of [...pending.keys()]) if (s <= slot) pending.delete(s);
    metrics.countSlots(o.cluster, STREAM_SOURCE, 'block', 1);
    if (stats.checkpoint !== null && slot <= stats.checkpoint && receipts.length === 0) return;
    // Empty slots move the checkpoint at most once per checkpointMs (one ledger transaction per slot would fall
    // behind a fast chain); a checkpoint written late only means more duplicates after a restart, never a gap.
    if (receipts.length === 0 && Date.now() - lastWrite < o.checkpointMs) {
      unwritten = slot;
      return;
    }
    await write(slot, receipts);
  }

  async function write(slot: number, receipts: Receipt[]): Promise<void> {
    await sink.apply(receipts, { slot, checkpoint: slot });
    lastWrite = Date.now();
    unwritten = null;
  }

  /** Write the checkpoint of the empty slots seen since the last write (on a timer and before stopping). */
  async function flushCheckpoint(): Promise<void> {
    if (unwritten !== null) await write(unwritten, []);
  }

  async function run({ signal }: { signal: AbortSignal }): Promise<StreamStats> {
    await runSessions(signal, session, { backoff: o.backoff, kind: 'stream', stats, log, metrics });
    return stats;
  }

  return { run, stats: () => ({ ...stats }) };
}
