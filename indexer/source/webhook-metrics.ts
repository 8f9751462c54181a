// The webhook's verification metrics. The names are a contract: deploy/prometheus alert rules use them.
//   oncepay_webhook_verification_failures_total{reason}  counter: a delivery or a hinted transaction that failed a
//     check — unauthenticated, malformed_signature, timestamp_outside_window, legacy_scheme (credentials refused),
//     body_mismatch (the delivery's transaction disagrees with the chain's), balance_mismatch (transfers disagree
//     with the transaction's own token balances), malformed (a transaction the decoder refuses).
//   oncepay_webhook_provisional_dropped_total{reason}    counter: hints dropped — DROP_REASONS.
//   oncepay_webhook_provisional_pending                  gauge: hints waiting for the chain.
//   the hints queue's share of db/queue's metrics (queue="webhook_hints"): claimed (leased for a check), settled
//     done (credited or refuted), retry (checked again later), dead (expired unconfirmed, deleted), released.
//   oncepay_webhook_hints_over_capacity_total{provider}  counter: deliveries refused 429, their provider's pending hints
//     at its cap (the label: a configured provider name or `unknown`, never a name a sender chose).
import { Counter, Gauge, Registry } from 'prom-client';
import { NO_QUEUE_METRICS, queueMetrics, type QueueMetrics } from '../../db/queue';
import { DROP_REASONS, type DropReason } from './webhook-hint-plan';

export const VERIFICATION_FAILURE_REASONS = [
  'unauthenticated',
  'malformed_signature',
  'timestamp_outside_window',
  'legacy_scheme',
  'body_mismatch',
  'balance_mismatch',
  'malformed',
] as const;
export type VerificationFailure = (typeof VERIFICATION_FAILURE_REASONS)[number];

export interface WebhookMetrics {
  countVerificationFailure(reason: VerificationFailure): void;
  countDropped(reason: DropReason): void;
  setPending(n: number): void;
  /** A delivery refused 429: `provider` is a configured name or `unknown`. */
  countOverCapacity(provider: string): void;
  /** The hints queue's share of the queue metrics (db/queue/metrics.ts, queue="webhook_hints"). */
  queue: QueueMetrics;
}

export const NO_WEBHOOK_METRICS: WebhookMetrics = {
  countVerificationFailure() {},
  countDropped() {},
  setPending() {},
  countOverCapacity() {},
  queue: NO_QUEUE_METRICS,
};

/** `providers`: the configured names, exported at 0 from the start (with `unknown`), so an increase is visible. */
export function createWebhookMetrics(registry: Registry, providers: readonly string[] = []): WebhookMetrics {
  const failures = new Counter({
    name: 'oncepay_webhook_verification_failures_total',
    help: 'Webhook deliveries or hinted transactions that failed verification (credentials, timestamp, chain, balances), by reason',
    labelNames: ['reason'],
    registers: [registry],
  });
  const dropped = new Counter({
    name: 'oncepay_webhook_provisional_dropped_total',
    help: 'Webhook hints dropped without a credit, by reason (not_found, rpc_error, failed_on_chain, balance_mismatch, malformed)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const pending = new Gauge({
    name: 'oncepay_webhook_provisional_pending',
    help: 'Webhook hints (transaction signatures) held until the chain confirms them',
    registers: [registry],
  });
  const overCapacity = new Counter({
    name: 'oncepay_webhook_hints_over_capacity_total',
    help: "Webhook deliveries refused 429: their provider's pending hints were at the cap (--max-pending-hints), by provider (configured name or unknown)",
    labelNames: ['provider'],
    registers: [registry],
  });
  // Every series exists from the start, so rate() and absent-series alerts see a 0 rather than nothing.
  for (const reason of VERIFICATION_FAILURE_REASONS) failures.inc({ reason }, 0);
  for (const reason of DROP_REASONS) dropped.inc({ reason }, 0);
  for (const provider of [...providers, 'unknown']) overCapacity.inc({ provider }, 0);
  return {
    countVerificationFailure: (reason) => failures.inc({ reason }),
    countDropped: (reason) => dropped.inc({ reason }),
    setPending: (n) => pending.set(n),
    countOverCapacity: (provider) => overCapacity.inc({ provider }),
    queue: queueMetrics('webhook_hints', registry),
  };
}
