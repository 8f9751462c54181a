// The outbox worker: claim due rows, POST each, mark it. Delivery is at-least-once (a crash between the
// merchant's 2xx and our mark means the row is sent again after its lease), and the Idempotency-Key (the
// fulfilment operation id) makes it once on the merchant's side.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { failpoint } from '../../common/failpoint';
import { logger } from '../../common/log';
import type { DeliveryRequest, DeliveryResult } from '../delivery/webhook';
import type { IndexerMetrics, OutboxStats } from '../metrics';
import { OUTBOX_CODES } from './codes';
import * as q from './queries';

export interface OutboxWorkerOptions {
  db: Pool;
  deliver: (req: DeliveryRequest, signal?: AbortSignal) => Promise<DeliveryResult>;
  log?: Logger;
  metrics?: IndexerMetrics;
  /** Overrides the merchants table: every row goes to this URL / is signed with this secret. */
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
  /** Rounds until `signal` aborts, or (drain) until nothing is pending or delivering. */
  run(opts?: { signal?: AbortSignal; drain?: boolean }): Promise<RoundResult>;
  stats(): Promise<OutboxStats>;
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
    if (!(typeof v === 'number' && Number.isFinite(v) && v >= 0) || ((name === 'batchSize' || name === 'maxAttempts') && v < 1)) {
      throw new OncepayError(OUTBOX_CODES.INVALID_OPTION, `${name} must be a positive number, got ${v}`);
    }
  }

  async function deliverOne(row: ClaimedRow, signal?: AbortSignal): Promise<'delivered' | 'failed' | 'dead'> {
    const url = o.url ?? row.webhook_url;
    const secret = o.secret ?? row.webhook_secret;
    let result: DeliveryResult;
    if (!url) result = { ok: false, status: null, error: `${OUTBOX_CODES.NO_TARGET}: no webhook URL for merchant ${row.merchant}` };
    else if (!secret) result = { ok: false, status: null, error: `${OUTBOX_CODES.NO_SECRET}: no webhook secret for merchant ${row.merchant}` };
    else {
      result = await o.deliver({ idempotencyKey: row.idempotency_key, topic: row.topic, body: JSON.stringify(row.payload), target: { url, secret } }, signal);
      failpoint('outbox.after_response_before_mark');
    }
    const ctx = { outboxId: row.id, fulfilmentId: row.fulfilment_id, attempt: row.attempts };
    if (result.ok) {
      await o.db.query(q.markDelivered(row.id, result.status));
      o.metrics?.outboxDeliveriesTotal.inc({ result: 'delivered' });
      log.info({ ...ctx, status: result.status }, 'outbox row delivered');
      return 'delivered';
    }
    const { rows } = await o.db.query(q.markFailed(row.id, row.attempts, maxAttempts, base, cap, result.error, result.status));
    const state = rows[0]?.state as string | undefined;
    o.metrics?.outboxDeliveriesTotal.inc({ result: state === 'dead' ? 'dead' : 'failed' });
    if (state === 'dead') log.error({ ...ctx, code: OUTBOX_CODES.DEAD_LETTER, error: result.error }, 'outbox row dead-lettered');
    else log.warn({ ...ctx, error: result.error, status: result.status }, 'outbox delivery failed, will retry');
    return state === 'dead' ? 'dead' : 'failed';
  }

  async function runOnce(signal?: AbortSignal): Promise<RoundResult> {
    const { rows } = await o.db.query<ClaimedRow>(q.claimDue(batchSize, leaseSeconds));
    const results = await Promise.all(rows.map((r) => deliverOne(r, signal)));
    return {
      claimed: rows.length,
      delivered: results.filter((r) => r === 'delivered').length,
      failed: results.filter((r) => r === 'failed').length,
      dead: results.filter((r) => r === 'dead').length,
    };
  }

  async function stats(): Promise<OutboxStats> {
    const { rows } = await o.db.query(q.outboxStats());
    return { depth: rows[0].depth, oldestAgeSeconds: rows[0].oldest_age_seconds };
  }

  async function run(opts: { signal?: AbortSignal; drain?: boolean } = {}): Promise<RoundResult> {
    const total: RoundResult = { claimed: 0, delivered: 0, failed: 0, dead: 0 };
    while (!opts.signal?.aborted) {
      let round: RoundResult | undefined;
      try {
        round = await runOnce(opts.signal);
        for (const k of Object.keys(total) as Array<keyof RoundResult>) total[k] += round[k];
      } catch (e) {
        // One bad round (database blip) must not end the loop; the rows stay claimable.
        log.error({ err: e }, 'outbox round failed');
      }
      if (round && round.claimed > 0) continue;
      if (opts.drain && (await stats()).depth === 0) break;
      await sleep(pollMs, opts.signal);
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
  webhook_url: string | null;
  webhook_secret: string | null;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Re-queue dead letters: one (outbox id or fulfilment id) or all. Returns the re-queued outbox ids. */
export async function replayDeadLetters(db: Pool, target: { id: string } | { all: true }): Promise<string[]> {
  const { rows } = await db.query('all' in target ? q.replayAllDead() : q.replayDead(target.id));
  if ('id' in target && rows.length === 0) {
    throw new OncepayError(OUTBOX_CODES.NOT_DEAD, `no dead outbox row with id or fulfilment id ${target.id}`, { id: target.id });
  }
  return rows.map((r) => String(r.id));
}
