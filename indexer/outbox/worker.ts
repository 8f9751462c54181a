// The outbox worker: claim due rows, POST each, mark it. Delivery is at-least-once (a crash between the
// merchant's 2xx and our mark means the row is sent again after its lease), and the Idempotency-Key (the
// fulfilment operation id) makes it once on the merchant's side.
//
// This file wires the worker; its parts: policy.ts (the options as a queue policy), deliver-row.ts (one row
// delivered and marked), round.ts (one claim round), run-loop.ts (the loop and its backoff).
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { logger } from '../../common/log';
import { NO_QUEUE_METRICS, queueMetrics } from '../../db/queue';
import { one, rows } from '../../db/sql';
import type { DeliveryRequest, DeliveryResult } from '../delivery/webhook';
import type { IndexerMetrics, OutboxStats } from '../metrics';
import { OUTBOX_CODES } from '../../common/errors/codes';
import { DeliveryContext } from './deliver-row';
import { OutboxPolicyOptions, outboxSettings } from './policy';
import { deliverRound, RoundResult } from './round';
import { runOutboxLoop } from './run-loop';
import * as q from './queries';

export type { RoundResult } from './round';

export interface OutboxWorkerOptions extends OutboxPolicyOptions {
  db: Pool;
  deliver: (req: DeliveryRequest, signal?: AbortSignal) => Promise<DeliveryResult>;
  log?: Logger;
  metrics?: IndexerMetrics;
  /** Overrides the webhook_endpoints table: every row goes to this URL / is signed with this secret. */
  url?: string;
  secret?: string;
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

/** What is left to deliver and what is dead, from the table (the metrics' gauges, the drain loop, the demo). */
export async function readOutboxStats(db: Pool): Promise<OutboxStats> {
  const s = (await one<{ depth: number; oldest_age_seconds: number; dead: number }>(db, q.outboxStats()))!;
  return { depth: s.depth, oldestAgeSeconds: s.oldest_age_seconds, dead: s.dead };
}

export function createOutboxWorker(o: OutboxWorkerOptions): OutboxWorker {
  const { policy, pollMs } = outboxSettings(o);
  const c: DeliveryContext = {
    db: o.db,
    deliver: o.deliver,
    log: o.log ?? logger('outbox'),
    metrics: o.metrics,
    queue: o.metrics ? queueMetrics('outbox', o.metrics.registry) : NO_QUEUE_METRICS,
    policy,
    url: o.url,
    secret: o.secret,
  };
  const stats = () => readOutboxStats(o.db);
  return {
    runOnce: (signal?: AbortSignal) => deliverRound(c, signal),
    run: (opts: { signal?: AbortSignal; drain?: boolean } = {}) => runOutboxLoop(c, { ...opts, pollMs, stats }),
    stats,
  };
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
