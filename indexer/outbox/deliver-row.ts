// One claimed outbox row: POST it to its merchant's endpoint (or refuse it when the merchant has none), then mark
// what the merchant answered — delivered, or failed with its next try (dead after the policy's attempts).
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { failpoint } from '../../common/failpoint';
import { OUTBOX_CODES } from '../../common/errors/codes';
import type { QueueMetrics, QueuePolicy } from '../../db/queue';
import { exec, one } from '../../db/sql';
import { retryWhileDatabaseUnavailable } from '../database-retry';
import type { DeliveryRequest, DeliveryResult } from '../delivery/webhook';
import type { IndexerMetrics } from '../metrics';
import * as q from './queries';

/** A row as the claim (queries.ts claimDue) returns it. */
export interface ClaimedRow {
  id: string;
  fulfilment_id: string;
  idempotency_key: string;
  merchant: string;
  topic: string;
  payload: unknown;
  attempts: number;
  /** The merchant's row in webhook_endpoints (null without one). */
  endpoint_url: string | null;
  endpoint_secret: string | null;
}

/** What delivering and marking a row needs. */
export interface DeliveryContext {
  db: Pool;
  deliver: (req: DeliveryRequest, signal?: AbortSignal) => Promise<DeliveryResult>;
  log: Logger;
  metrics?: IndexerMetrics;
  queue: QueueMetrics;
  policy: QueuePolicy;
  /** Overrides the webhook_endpoints table: every row goes to this URL / is signed with this secret. */
  url?: string;
  secret?: string;
}

export type RowOutcome = 'delivered' | 'failed' | 'dead';

/** Pure: the request for `row`, or the failure to record when it has no target URL or no secret. */
export function outboxRequest(
  row: ClaimedRow,
  override: { url?: string; secret?: string },
): { request: DeliveryRequest } | { refused: DeliveryResult } {
  const url = override.url ?? row.endpoint_url;
  const secret = override.secret ?? row.endpoint_secret;
  const refused = (code: string, what: string): { refused: DeliveryResult } => ({
    refused: { ok: false, status: null, error: `${code}: no webhook ${what} for merchant ${row.merchant}` },
  });
  if (!url) return refused(OUTBOX_CODES.NO_TARGET, 'URL');
  if (!secret) return refused(OUTBOX_CODES.NO_SECRET, 'secret');
  return {
    request: {
      idempotencyKey: row.idempotency_key,
      topic: row.topic,
      body: JSON.stringify(row.payload),
      target: { url, secret },
    },
  };
}

/** `signal` aborts the delivery itself; `markSignal` only ends a wait for the database to record it. */
export async function deliverRow(
  c: DeliveryContext,
  row: ClaimedRow,
  signal?: AbortSignal,
  markSignal?: AbortSignal,
): Promise<RowOutcome> {
  const plan = outboxRequest(row, c);
  let result: DeliveryResult;
  if ('refused' in plan) {
    result = plan.refused;
  } else {
    result = await c.deliver(plan.request, signal);
    failpoint('outbox.after_response_before_mark');
  }
  const ctx = { outboxId: row.id, fulfilmentId: row.fulfilment_id, attempt: row.attempts };
  // The merchant has answered: record it even if the database is away for a while (backoff with jitter), so
  // the row is not delivered again after its lease. Stopping gives up the wait; the lease hands the row back.
  const mark = <T>(what: string, step: () => Promise<T>) =>
    retryWhileDatabaseUnavailable(step, { signal: markSignal, log: c.log, what });
  if (result.ok) {
    await mark('outbox mark delivered', () => exec(c.db, q.markDelivered(row.id, result.status)));
    c.metrics?.outboxDeliveriesTotal.inc({ result: 'delivered' });
    c.queue.settled('done');
    c.log.info({ ...ctx, status: result.status }, 'outbox row delivered');
    return 'delivered';
  }
  const marked = await mark('outbox mark failed', () =>
    one<{ state: string }>(c.db, q.markFailed(row.id, row.attempts, c.policy, result.error, result.status)),
  );
  const state = marked?.state;
  c.metrics?.outboxDeliveriesTotal.inc({ result: state === 'dead' ? 'dead' : 'failed' });
  c.queue.settled(state === 'dead' ? 'dead' : 'retry');
  if (state === 'dead')
    c.log.error({ ...ctx, code: OUTBOX_CODES.DEAD_LETTER, error: result.error }, 'outbox row dead-lettered');
  else c.log.warn({ ...ctx, error: result.error, status: result.status }, 'outbox delivery failed, will retry');
  return state === 'dead' ? 'dead' : 'failed';
}
