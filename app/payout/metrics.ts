// Prometheus metrics of the payout executor (default prom-client registry, created once per process).
import { Counter, register } from 'prom-client';

export interface PayoutMetrics {
  attempts: Counter<'outcome'>;
  sends: Counter<'kind'>;
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
    sends: counter('oncepay_payout_sends_total', 'Transactions handed to an RPC node (first send or rebroadcast of the same bytes)', ['kind']),
    payouts: counter('oncepay_payouts_finished_total', 'Payouts finished, by final state', ['state']),
  };
  return metrics;
}
