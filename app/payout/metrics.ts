// Prometheus metrics of the payout executor (default prom-client registry, created once per process).
import { Counter, register } from 'prom-client';

export interface PayoutMetrics {
  attempts: Counter<'outcome'>;
  sends: Counter<'kind' | 'outcome'>;
  payouts: Counter<'state'>;
}

let metrics: PayoutMetrics | undefined;

function counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
  const existing = register.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames });
}

export function payoutMetrics(): PayoutMetrics {
  metrics ??= {
    attempts: counter('oncepay_payout_attempts_total', 'Payout attempts settled, by outcome (built, landed, failed, consumed, expired)', ['outcome']),
    sends: counter('oncepay_payout_sends_total', 'Sends of a signed attempt (first or rebroadcast of the same bytes), by outcome (ok, or error: delivery unknown)', ['kind', 'outcome']),
    payouts: counter('oncepay_payouts_finished_total', 'Payouts finished, by final state', ['state']),
  };
  return metrics;
}
