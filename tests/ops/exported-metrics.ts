// Every metric the code exports, by name and type, collected by instantiating the real metric factories — the
// indexer's registry (ledger, sources, outbox) and prom-client's default registry (payout executor and workers,
// merchant API) — exactly as the commands do, never by reading names out of source text.
import { register } from 'prom-client';
import { payoutMetrics, watchOpenAttempts } from '../../app/payout/metrics';
import { createIndexerMetrics } from '../../indexer/metrics';
import { createSourceMetrics } from '../../indexer/source/metrics';
import { createWebhookMetrics } from '../../indexer/source/webhook-metrics';

export async function exportedMetrics(): Promise<Map<string, string>> {
  const indexer = createIndexerMetrics();
  createSourceMetrics(indexer);
  createWebhookMetrics(indexer.registry);
  payoutMetrics();
  // The uncertain-attempt gauges exist once a worker watches the journal (`payout worker`, `payout serve --rpc`).
  const unwatch = watchOpenAttempts(async () => ({ open: 0, oldestAgeSeconds: 0 }));
  const out = new Map<string, string>();
  try {
    for (const m of [...(await indexer.registry.getMetricsAsJSON()), ...(await register.getMetricsAsJSON())])
      out.set(m.name, String(m.type));
  } finally {
    unwatch();
  }
  return out;
}
