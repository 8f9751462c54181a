// Act 3: the fulfilment outbox delivers each paid invoice to the merchant's endpoint. The endpoint fails the
// first delivery of one invoice; the worker retries with backoff and the same Idempotency-Key.
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import { createWebhookDelivery } from '../indexer/delivery';
import type { IndexerMetrics } from '../indexer/metrics';
import { createOutboxWorker, RoundResult } from '../indexer/outbox';
import type { Teardown } from './infra';
import { MerchantEndpoint, startMerchantEndpoint } from './merchant-endpoint';
import type { Narrator } from './narrator';
import { short } from './narrator';

export const FAIL_ONCE_INVOICE = 'INV-1002';

export interface FulfilmentEvidence {
  endpoint: MerchantEndpoint;
  worker: RoundResult;
}

export async function runFulfilment(deps: {
  db: Pool;
  metrics: IndexerMetrics;
  log: Logger;
  say: Narrator;
  teardown: Teardown;
}): Promise<FulfilmentEvidence> {
  const { db, say } = deps;
  const endpoint = await startMerchantEndpoint({
    secret: 'demo-merchant-webhook-secret',
    failFirstFor: FAIL_ONCE_INVOICE,
  });
  deps.teardown.push('merchant endpoint', () => endpoint.close());
  say.step(
    `merchant endpoint listening at ${endpoint.url} (it will answer 503 to the first delivery of ${FAIL_ONCE_INVOICE})`,
  );
  const worker = createOutboxWorker({
    db,
    log: deps.log,
    metrics: deps.metrics,
    deliver: createWebhookDelivery({ timeoutMs: 5000 }),
    url: endpoint.url,
    secret: endpoint.secret,
    batchSize: 10,
    leaseSeconds: 30,
    maxAttempts: 5,
    backoffBaseSeconds: 0.2,
    backoffCapSeconds: 1,
    pollMs: 100,
  });
  const drain = new AbortController();
  const timer = setTimeout(() => drain.abort(), 120_000);
  let result: RoundResult;
  try {
    result = await worker.run({ drain: true, signal: drain.signal });
  } finally {
    clearTimeout(timer);
  }
  for (const r of endpoint.requests) {
    say.note(
      `#${r.n} ${r.invoiceId}  Idempotency-Key ${short(r.idempotencyKey ?? '-', 12)}  → ${r.status} ${r.outcome}`,
    );
  }
  say.step(
    `outbox drained: ${result.delivered} delivered, ${result.failed} failed and retried, ${result.dead} dead letters`,
  );
  return { endpoint, worker: result };
}
