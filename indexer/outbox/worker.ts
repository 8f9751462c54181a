// The outbox worker: claim due rows, POST each, mark it. Delivery is at-least-once (a crash between the
// merchant's 2xx and our mark means the row is sent again after its lease), and the Idempotency-Key (the
// fulfilment operation id) makes it once on the merchant's side.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { backoffDelay } from '../../common/backoff';
import { OncepayError } from '../../common/errors';
import { failpoint } from '../../common/failpoint';
import { ignoreAbort, sleep } from '../../common/sleep';
import { logger } from '../../common/log';
import { NO_QUEUE_METRICS, queueMetrics, type QueuePolicy } from '../../db/queue';
import { exec, one, rows } from '../../db/sql';
import { isDatabaseUnavailable } from '../../db/unavailable';
import { retryWhileDatabaseUnavailable } from '../database-retry';
import type { DeliveryRequest, DeliveryResult } from '../delivery/webhook';
import type { IndexerMetrics, OutboxStats } from '../metrics';
import { OUTBOX_CODES } from '../../common/errors/codes';
import * as q from './queries';

export interface OutboxWorkerOptions {
  db: Pool;
  deliver: (req: DeliveryRequest, signal?: AbortSignal) => Promise<DeliveryResult>;
  log?: Logger;
  metrics?: IndexerMetrics;
  /** Overrides the webhook_endpoints table: every row goes to this URL / is signed with this secret. */
  url?: string;
  secret?: string;
  batchSize?: number;
  leaseSeconds?: number;
  maxAttempts?: number;
  backoffBaseSeconds?: number;
  backoffCapSeconds?: number;
  pollMs?: number;
}

export interface RoundResult {
  claimed: number;
  delivered: number;
  failed: number;
  dead: number;
}

export interface OutboxWorker {
  /** One claim round: claim, deliver concurrently, mark. */
  runOnce(signal?: AbortSignal): Promise<RoundResult>;
  /**
   * Rounds until `signal` aborts, or (drain) until nothing is pending or delivering. A stop claims nothing more
   * and lets the deliveries in flight finish (each bounded by the delivery timeout) and be marked.
   */
  run(opts?: { signal?: AbortSignal; drain?: boolean }): Promise<RoundResult>;
  stats(): Promise<OutboxStats>;
}

/** Longest wait between two failed rounds. */
export const FAILED_ROUND_BACKOFF_CAP_MS = 30_000;

/** What is left to deliver and what is dead, from the table (the metrics' gauges, the drain loop, the demo). */
export async function readOutboxStats(db: Pool): Promise<OutboxStats> {
  const s = (await one<{ depth: number; oldest_age_seconds: number; dead: number }>(db, q.outboxStats()))!;
  return { depth: s.depth, oldestAgeSeconds: s.oldest_age_seconds, dead: s.dead };
}

export function createOutboxWorker(o: OutboxWorkerOptions): OutboxWorker {
  const log = o.log ?? logger('outbox');
  const batchSize = o.batchSize ?? 10;
  const leaseSeconds = o.leaseSeconds ?? 60;
  const maxAttempts = o.maxAttempts ?? 10;
  const base = o.backoffBaseSeconds ?? 1;
  const cap = o.backoffCapSeconds ?? 3600;
  const pollMs = o.pollMs ?? 1000;
  for (const [name, v] of Object.entries({ batchSize, leaseSeconds, maxAttempts, base, cap, pollMs })) {
    if (
      !(typeof v === 'number' && Number.isFinite(v) && v >= 0) ||
      ((name === 'batchSize' || name === 'maxAttempts') && v < 1)
    ) {
      throw new OncepayError(OUTBOX_CODES.INVALID_OPTION, `${name} must be a positive number, got ${v}`);
    }
  }
  // The outbox as a configuration of the one queue mechanism (db/queue): held by a lease, retried with backoff,
  // dead-lettered after maxAttempts (kept for `oncepay outbox replay`).
  const policy: QueuePolicy = {
    queue: 'outbox',
    batch: batchSize,
    hold: { leaseMs: leaseSeconds * 1000, session: false },
    backoff: { baseMs: base * 1000, capMs: cap * 1000 },
    deadLetter: { after: 'attempts', max: maxAttempts },
  };
  const queue = o.metrics ? queueMetrics('outbox', o.metrics.registry) : NO_QUEUE_METRICS;

  async function deliverOne(
    row: ClaimedRow,
    signal?: AbortSignal,
    markSignal?: AbortSignal,
  ): Promise<'delivered' | 'failed' | 'dead'> {
    const url = o.url ?? row.endpoint_url;
    const secret = o.secret ?? row.endpoint_secret;
    let result: DeliveryResult;
    if (!url)
      result = {
        ok: false,
        status: null,
        error: `${OUTBOX_CODES.NO_TARGET}: no webhook URL for merchant ${row.merchant}`,
      };
    else if (!secret)
      result = {
        ok: false,
        status: null,
        error: `${OUTBOX_CODES.NO_SECRET}: no webhook secret for merchant ${row.merchant}`,
      };
    else {
      result = await o.deliver(
        {
          idempotencyKey: row.idempotency_key,
          topic: row.topic,
          body: JSON.stringify(row.payload),
          target: { url, secret },
        },
        signal,
      );
      failpoint('outbox.after_response_before_mark');
    }
    const ctx = { outboxId: row.id, fulfilmentId: row.fulfilment_id, attempt: row.attempts };
    // The merchant has answered: record it even if the database is away for a while (backoff with jitter), so
    // the row is not delivered again after its lease. Stopping gives up the wait; the lease hands the row back.
    const mark = <T>(what: string, step: () => Promise<T>) =>
      retryWhileDatabaseUnavailable(step, { signal: markSignal, log, what });
    if (result.ok) {
      await mark('outbox mark delivered', () => exec(o.db, q.markDelivered(row.id, result.status)));
      o.metrics?.outboxDeliveriesTotal.inc({ result: 'delivered' });
      queue.settled('done');
      log.info({ ...ctx, status: result.status }, 'outbox row delivered');
      return 'delivered';
    }
    const marked = await mark('outbox mark failed', () =>
      one<{ state: string }>(o.db, q.markFailed(row.id, row.attempts, policy, result.error, result.status)),
    );
    const state = marked?.state;
    o.metrics?.outboxDeliveriesTotal.inc({ result: state === 'dead' ? 'dead' : 'failed' });
    queue.settled(state === 'dead' ? 'dead' : 'retry');
    if (state === 'dead')
      log.error({ ...ctx, code: OUTBOX_CODES.DEAD_LETTER, error: result.error }, 'outbox row dead-lettered');
    else log.warn({ ...ctx, error: result.error, status: result.status }, 'outbox delivery failed, will retry');
    return state === 'dead' ? 'dead' : 'failed';
  }

  /** `signal` aborts the deliveries themselves; `markSignal` only ends a wait for the database to record them. */
  async function round(signal?: AbortSignal, markSignal?: AbortSignal): Promise<RoundResult> {
    const claimed = await rows<ClaimedRow>(o.db, q.claimDue(policy));
    queue.claimed(claimed.length);
    const settled = await Promise.allSettled(claimed.map((r) => deliverOne(r, signal, markSignal ?? signal)));
    const results = settled.map((x) => (x.status === 'fulfilled' ? x.value : undefined));
    const unmarked = settled.filter((x): x is PromiseRejectedResult => x.status === 'rejected');
    // A row whose result could not be recorded stays 'delivering' and is claimed again after its lease.
    queue.settled('released', unmarked.length);
    for (const x of unmarked)
      log.error({ err: (x.reason as Error).message }, 'outbox row not marked; its lease hands it back');
    return {
      claimed: claimed.length,
      delivered: results.filter((r) => r === 'delivered').length,
      failed: results.filter((r) => r === 'failed').length,
      dead: results.filter((r) => r === 'dead').length,
    };
  }

  const runOnce = (signal?: AbortSignal) => round(signal);

  const stats = () => readOutboxStats(o.db);

  async function run(opts: { signal?: AbortSignal; drain?: boolean } = {}): Promise<RoundResult> {
    const total: RoundResult = { claimed: 0, delivered: 0, failed: 0, dead: 0 };
    let failures = 0;
    while (!opts.signal?.aborted) {
      try {
        // Deliveries in flight are not aborted by a stop: they finish (within the delivery timeout) and are marked.
        const r = await round(undefined, opts.signal);
        for (const k of Object.keys(total) as Array<keyof RoundResult>) total[k] += r[k];
        failures = 0;
        if (r.claimed > 0) continue;
        if (opts.drain && (await stats()).depth === 0) break;
        await sleep(pollMs, opts.signal).catch(ignoreAbort);
      } catch (e) {
        // A failed round (the database away) must not end the loop: the rows stay claimable. Back off with jitter.
        failures++;
        const waitMs = backoffDelay(
          failures,
          { baseMs: Math.max(pollMs, 100), capMs: FAILED_ROUND_BACKOFF_CAP_MS },
          Math.random(),
        );
        log.error(
          {
            err: (e as Error).message,
            code: (e as { code?: string }).code,
            databaseUnavailable: isDatabaseUnavailable(e),
            failures,
            waitMs,
          },
          'outbox round failed',
        );
        await sleep(waitMs, opts.signal).catch(ignoreAbort);
      }
    }
    return total;
  }

  return { runOnce, run, stats };
}

interface ClaimedRow {
  id: string;
  fulfilment_id: string;
  idempotency_key: string;
  merchant: string;
  topic: string;
  payload: unknown;
  attempts: number;
  /** The merchant's row in webhook_endpoints (null without one). */
  endpoint_url: string | null;
  endpoint_secret: string | null;
}

/** Re-queue dead letters: one (outbox id or fulfilment id) or all. Returns the re-queued outbox ids. */
export async function replayDeadLetters(db: Pool, target: { id: string } | { all: true }): Promise<string[]> {
  const requeued = await rows<{ id: string }>(db, 'all' in target ? q.replayAllDead() : q.replayDead(target.id));
  if ('id' in target && requeued.length === 0) {
    throw new OncepayError(OUTBOX_CODES.NOT_DEAD, `no dead outbox row with id or fulfilment id ${target.id}`, {
      id: target.id,
    });
  }
  return requeued.map((r) => String(r.id));
}
