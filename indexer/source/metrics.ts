// The sources' metrics on the indexer's registry (indexer/metrics.ts): checkpoint lag and RPC errors there,
// plus the counters only the sources feed.
import { Counter } from 'prom-client';
import type { IndexerMetrics } from '../metrics';
import type { SourceMetrics } from './ports';

export function createSourceMetrics(m: IndexerMetrics): SourceMetrics {
  const slots = new Counter({
    name: 'oncepay_scanner_slots_total',
    help: 'Slots read by the scanner / backfill, by outcome (block, skipped, failed)',
    labelNames: ['cluster', 'source', 'outcome'],
    registers: [m.registry],
  });
  const webhooks = new Counter({
    name: 'oncepay_webhook_deliveries_total',
    help: 'Webhook deliveries, by provider and result (applied, partial, duplicate, dead_letter, unauthorized)',
    labelNames: ['provider', 'result'],
    registers: [m.registry],
  });
  const balanceMismatches = new Counter({
    name: 'oncepay_balance_mismatch_total',
    help: 'Transactions refused (nothing credited) because their decoded transfers disagree with their own token balances, by source',
    labelNames: ['cluster', 'source'],
    registers: [m.registry],
  });
  return {
    setCheckpointLag: (cluster, source, n) => m.checkpointLagSlots.set({ cluster, source }, n),
    countRpcError: (kind) => m.rpcErrorsTotal.inc({ kind }),
    countSlots: (cluster, source, outcome, n) => {
      if (n > 0) slots.inc({ cluster, source, outcome }, n);
    },
    countWebhook: (provider, result) => webhooks.inc({ provider, result }),
    countBalanceMismatch: (cluster, source) => balanceMismatches.inc({ cluster, source }),
  };
}
