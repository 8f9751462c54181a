// POSTs one outbox payload to the merchant. The Idempotency-Key is the fulfilment operation id, identical on every
// attempt, so the merchant can drop a repeat; the body is the stored payload, byte for byte the same each time.
import { SIGNATURE_HEADER, signBody } from './signature';

export interface DeliveryTarget {
  url: string;
  secret: string;
}

export interface DeliveryRequest {
  idempotencyKey: string;
  topic: string;
  body: string;
  target: DeliveryTarget;
}

export type DeliveryResult = { ok: true; status: number } | { ok: false; status: number | null; error: string };

export interface WebhookDeliveryOptions {
  timeoutMs?: number;
  /** Unix seconds for the signature; injectable for tests. */
  nowSeconds?: () => number;
  fetch?: typeof fetch;
}

export function createWebhookDelivery(
  opts: WebhookDeliveryOptions = {},
): (req: DeliveryRequest, signal?: AbortSignal) => Promise<DeliveryResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const now = opts.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const doFetch = opts.fetch ?? fetch;
  return async (req, signal) => {
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
    try {
      const res = await doFetch(req.target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': req.idempotencyKey,
          'x-oncepay-topic': req.topic,
          [SIGNATURE_HEADER]: signBody(req.target.secret, now(), req.body),
        },
        body: req.body,
        signal: AbortSignal.any(signals),
      });
      // Drain the body so the connection is reusable; its content does not matter.
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
      return { ok: false, status: res.status, error: `HTTP ${res.status}` };
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      const what =
        err.name === 'TimeoutError'
          ? `timeout after ${timeoutMs} ms`
          : `${err.name}: ${err.message}${err.cause?.code ? ` (${err.cause.code})` : ''}`;
      return { ok: false, status: null, error: what };
    }
  };
}
