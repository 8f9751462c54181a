// `POST /v1/webhooks/:provider`: the gate (webhook-gate.ts) refuses on the URL and headers before the body is read;
// the handler plans the delivery from its raw bytes (webhook-plan.ts), refuses or dead-letters it whole, answers a
// redelivered event as a duplicate, and hands the rest to an intake: hint intake (webhook-hold.ts) or, with
// trustProvider, the trusted one (webhook-trusted.ts). Every answer is built by webhook-reply.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { HttpError, httpErrorBodySchema, sendHttpError } from '../../common/errors/http';
import type { SourceMetrics } from './ports';
import { GateDeps, refuseUnauthorized, webhookGate } from './webhook-gate';
import { HoldDeps, holdAndCheck } from './webhook-hold';
import type { WebhookMetrics } from './webhook-metrics';
import { DeliveryPlan, DeliveryPolicy, ItemRefusal, planDelivery } from './webhook-plan';
import { Delivery, deadLetterRows } from './webhook-records';
import { ReplyBase, replyBody, webhookReplySchema, WebhookReply } from './webhook-reply';
import type { WebhookStore } from './webhook-store';
import { applyTrusted, TrustedDeps } from './webhook-trusted';

export interface RouteDeps {
  gate: GateDeps;
  /** The planning policy, without its clock. */
  policy: Omit<DeliveryPolicy, 'nowS'>;
  nowS: () => number;
  store: WebhookStore;
  /** Hint intake; absent with trustProvider. */
  hold: HoldDeps | null;
  trusted: TrustedDeps;
  metrics: SourceMetrics;
  webhookMetrics: WebhookMetrics;
  log?: Logger;
}

const routeSchema = {
  params: {
    type: 'object',
    required: ['provider'],
    properties: { provider: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,39}$' } },
  },
  headers: {
    type: 'object',
    properties: {
      'x-oncepay-signature': { type: 'string' },
      'x-oncepay-secret': { type: 'string' },
      'x-oncepay-event-id': { type: 'string' },
    },
  },
  response: {
    200: webhookReplySchema,
    202: webhookReplySchema,
    ...Object.fromEntries([400, 401, 404, 413, 415, 429, 500].map((s) => [s, httpErrorBodySchema])),
  },
} as const;

export function registerDeliveryRoute(app: FastifyInstance, deps: RouteDeps): void {
  app.post<{ Params: { provider: string } }>(
    '/v1/webhooks/:provider',
    { onRequest: webhookGate(deps.gate), schema: routeSchema },
    (req, reply) => handleDelivery(deps, req, reply),
  );
}

type Accepted = Extract<DeliveryPlan, { action: 'hold' | 'apply' }>;

const everyItemRefused = (deps: RouteDeps, reply: FastifyReply, d: Delivery, refused: readonly ItemRefusal[]) => {
  deps.metrics.countWebhook(d.bucket, 'dead_letter');
  const first = refused[0];
  const message = `every item was refused (kept in webhook_dead_letters); first: ${first.message}`;
  return sendHttpError(reply, new HttpError(400, first.code, message));
};

async function handleDelivery(
  deps: RouteDeps,
  req: FastifyRequest<{ Params: { provider: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const provider = req.params.provider;
  const bucket = deps.gate.label(provider);
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const plan = planDelivery(raw, req.headers, { ...deps.policy, nowS: deps.nowS() });
  if (plan.action === 'unauthorized') return refuseUnauthorized(deps.gate, bucket, plan, req.ip);
  if (plan.action === 'refuse') {
    const { code, message, eventId } = plan;
    await deps.store.deadLetter([{ provider, eventId, itemIndex: null, reason: code, detail: message, rawBody: raw }]);
    deps.metrics.countWebhook(bucket, 'dead_letter');
    deps.log?.warn({ provider, code, eventId }, `webhook delivery dead-lettered: ${message}`);
    return sendHttpError(reply, new HttpError(400, code, `${message} (the delivery is kept in webhook_dead_letters)`));
  }
  const base: ReplyBase = { eventId: plan.eventId, transactions: plan.items, verified: !deps.policy.trustProvider };
  const answer = (status: number, counts: Partial<WebhookReply>) => reply.status(status).send(replyBody(base, counts));

  const seen = plan.eventId === null ? null : await deps.store.findEvent(provider, plan.eventId);
  if (seen === plan.bodySha256) {
    deps.metrics.countWebhook(bucket, 'duplicate');
    return answer(200, { duplicate: true });
  }
  // Same event id, other bytes: a provider bug or a re-signed payload. Processing it is safe (hints and receipts
  // are idempotent) and dropping it could lose a payment, so it is processed and flagged.
  const reused = seen !== null;
  if (reused)
    deps.log?.warn(
      { provider, eventId: plan.eventId },
      'webhook event id seen before with a different body; processing it',
    );
  for (const f of plan.failures) deps.webhookMetrics.countVerificationFailure(f);
  const d: Delivery = {
    provider,
    bucket,
    eventId: plan.eventId,
    raw,
    bodySha256: plan.bodySha256,
    items: plan.items,
    reused,
  };
  return accept(deps, reply, d, plan, answer);
}

/** An authenticated, new delivery: its hints held and checked, or (trustProvider) its receipts applied. */
async function accept(
  deps: RouteDeps,
  reply: FastifyReply,
  d: Delivery,
  plan: Accepted,
  answer: (status: number, counts: Partial<WebhookReply>) => FastifyReply,
): Promise<FastifyReply> {
  if (plan.action === 'hold') {
    if (plan.hints.length === 0) {
      if (plan.refused.length > 0)
        deps.log?.warn({ provider: d.provider, eventId: d.eventId, bad: plan.refused }, 'webhook items dead-lettered');
      await deps.store.deadLetter(deadLetterRows(d, plan.refused));
      return everyItemRefused(deps, reply, d, plan.refused);
    }
    const o = await holdAndCheck(deps.hold!, d, plan.hints, plan.refused);
    return answer(o.pending > 0 ? 202 : 200, {
      duplicate: o.duplicate,
      receipts: o.sum.receipts,
      inserted: o.sum.inserted,
      duplicates: o.sum.duplicates,
      deadLettered: plan.refused.length,
      rejected: plan.refused,
      credited: o.credited,
      pending: o.pending,
      dropped: o.dropped,
    });
  }
  const o = await applyTrusted(deps.trusted, d, plan.receipts, plan.itemOf, plan.refused);
  if (o.allRefused) return everyItemRefused(deps, reply, d, o.refused);
  const { duplicate, inserted, duplicates, refused } = o;
  return answer(200, {
    duplicate,
    receipts: plan.receipts.length,
    inserted,
    duplicates,
    deadLettered: refused.length,
    rejected: refused,
  });
}
