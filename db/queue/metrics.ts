// One set of Prometheus metrics for every queue, labelled by queue (QUEUE_NAMES): the names are a contract
// (deploy/prometheus alert rules may use them).
//   oncepay_queue_claimed_total{queue}          rows claimed (a claim statement's rows: each an attempt begun)
//   oncepay_queue_settled_total{queue,outcome}  claims ended: done (the job's final state written), retry (due again
//     after its backoff), dead (dead-lettered, or dropped past its age), released (handed back unfinished: a drain,
//     an outage, another worker's key)
// Each queue's depth and age stay its own gauges (oncepay_outbox_depth, oncepay_webhook_provisional_pending…):
// they read the business table, whose states differ per queue.
import { Counter, register as defaultRegistry, type Registry } from 'prom-client';
import type { QueueName } from './policy';

export const QUEUE_OUTCOMES = ['done', 'retry', 'dead', 'released'] as const;
export type QueueOutcome = (typeof QUEUE_OUTCOMES)[number];

export interface QueueMetrics {
  claimed(n: number): void;
  settled(outcome: QueueOutcome, n?: number): void;
}

export const NO_QUEUE_METRICS: QueueMetrics = { claimed() {}, settled() {} };

function counter(registry: Registry, name: string, help: string, labelNames: string[]): Counter<string> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<string>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/**
 * The queue metrics of `queue` in `registry` (default: prom-client's global one), created once per registry and
 * shared by its queues. Every series of the queue exists from the start (at 0), so a first dead letter is an
 * increase Prometheus can see.
 */
export function queueMetrics(queue: QueueName, registry: Registry = defaultRegistry): QueueMetrics {
  const claimed = counter(registry, 'oncepay_queue_claimed_total', 'Rows claimed from a queue, by queue', ['queue']);
  const settled = counter(
    registry,
    'oncepay_queue_settled_total',
    'Claims of a queue ended, by queue and outcome (done, retry, dead, released)',
    ['queue', 'outcome'],
  );
  claimed.inc({ queue }, 0);
  for (const outcome of QUEUE_OUTCOMES) settled.inc({ queue, outcome }, 0);
  return {
    claimed: (n) => claimed.inc({ queue }, n),
    settled: (outcome, n = 1) => settled.inc({ queue, outcome }, n),
  };
}
