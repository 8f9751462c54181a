// Prometheus metrics of the payout executor and its worker pool (default prom-client registry, created once per
// process). The names are a contract: deploy/prometheus alert rules and the dashboard use them.
import { Counter, Gauge, register } from 'prom-client';
import { queueMetrics, type QueueMetrics } from '../../db/queue';

export interface PayoutMetrics {
  attempts: Counter<'outcome'>;
  sends: Counter<'kind' | 'outcome'>;
  payouts: Counter<'state'>;
  /** A payout row and its op account disagree (recipient, amount, mint…): flagged, never "fixed". */
  conflicts: Counter<string>;
  /** Claim statements of the worker pool, by result (claimed, empty, busy, error). */
  claims: Counter<'result'>;
  /** Claimed payouts given back unfinished, by reason (drain, chain_unavailable, error). */
  handbacks: Counter<'reason'>;
  /** The payout queue's share of the queue metrics (db/queue/metrics.ts, queue="payouts"). */
  queue: QueueMetrics;
}

let metrics: PayoutMetrics | undefined;

function counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
  const existing = register.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames });
}

export function payoutMetrics(): PayoutMetrics {
  metrics ??= {
    attempts: counter(
      'oncepay_payout_attempts_total',
      'Payout attempts settled, by outcome (built, landed, failed, consumed, expired)',
      ['outcome'],
    ),
    sends: counter(
      'oncepay_payout_sends_total',
      'Sends of a signed attempt (first or rebroadcast of the same bytes), by outcome (ok, or error: delivery unknown)',
      ['kind', 'outcome'],
    ),
    payouts: counter('oncepay_payouts_finished_total', 'Payouts finished, by final state', ['state']),
    conflicts: counter(
      'oncepay_payout_conflicts_total',
      'Payouts whose op account records other terms than the row (state conflict)',
      [],
    ),
    claims: counter(
      'oncepay_payout_worker_claims_total',
      'Claim statements of the payout worker pool, by result (claimed, empty, busy: locked by another session, error: database)',
      ['result'],
    ),
    handbacks: counter(
      'oncepay_payout_worker_handbacks_total',
      'Claimed payouts given back unfinished, by reason (drain, chain_unavailable, error: a refusal about this payout, database: an outage, unexpected: anything else, e.g. a bug)',
      ['reason'],
    ),
    queue: queueMetrics('payouts', register),
  };
  return metrics;
}

/** What the uncertain-attempt gauges show, read from the journal at scrape time. */
export interface OpenAttemptStats {
  open: number;
  oldestAgeSeconds: number;
}

let readStats: (() => Promise<OpenAttemptStats>) | undefined;
let lastStats: OpenAttemptStats = { open: 0, oldestAgeSeconds: 0 };
let reading: Promise<OpenAttemptStats> | undefined;
const READ_TIMEOUT_MS = 2000;

/** One read shared by both gauges of a scrape; the database away or slow → the last known values. */
function currentStats(): Promise<OpenAttemptStats> {
  const read = readStats;
  if (!read) return Promise.resolve(lastStats);
  reading ??= new Promise<OpenAttemptStats>((resolve) => {
    const t = setTimeout(() => resolve(lastStats), READ_TIMEOUT_MS);
    read().then(
      (s) => {
        clearTimeout(t);
        lastStats = s;
        resolve(s);
      },
      () => {
        clearTimeout(t);
        resolve(lastStats);
      },
    );
  }).finally(() => {
    reading = undefined;
  });
  return reading;
}

/**
 * The gauges of attempts whose outcome is not known yet, read from the journal by `read` on every scrape (the
 * last worker started in a process provides it; every worker on one database reads the same journal).
 */
export function watchOpenAttempts(read: () => Promise<OpenAttemptStats>): () => void {
  readStats = read;
  const unwatch = () => {
    if (readStats === read) readStats = undefined;
  };
  if (register.getSingleMetric('oncepay_payout_uncertain_attempts')) return unwatch;
  new Gauge({
    name: 'oncepay_payout_uncertain_attempts',
    help: 'Payout attempts signed and persisted whose outcome is not known yet (built: maybe sent; sent)',
    async collect(this: Gauge) {
      this.set((await currentStats()).open);
    },
  });
  new Gauge({
    name: 'oncepay_payout_oldest_uncertain_attempt_age_seconds',
    help: 'Age of the oldest payout attempt whose outcome is not known yet (0 when none)',
    async collect(this: Gauge) {
      this.set((await currentStats()).oldestAgeSeconds);
    },
  });
  return unwatch;
}
