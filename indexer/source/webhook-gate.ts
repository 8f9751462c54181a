// The webhook's door: what the URL and the headers alone refuse, before fastify reads the body (it parses the body
// after onRequest), so a stranger's request costs no body buffer; `Connection: close` spares reading the rest of it.
// The same 401 (counted, throttled log, nothing stored) answers a request whose body then fails authentication.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { WEBHOOK_CODES } from '../../common/errors/codes';
import { HttpError } from '../../common/errors/http';
import type { ThrottledWarn } from '../../common/throttled-log';
import type { SourceMetrics } from './ports';
import { AuthConfig, precheckCredentials } from './webhook-auth';
import type { WebhookMetrics } from './webhook-metrics';
import { DeliveryPlan, unauthorizedPlan } from './webhook-plan';
import { PROVIDER_NAME, UNKNOWN_PROVIDER } from './webhook-providers';

export interface GateDeps {
  auth: AuthConfig;
  /** A provider name → its label (webhook-providers.ts). */
  label: (provider: string) => string;
  metrics: SourceMetrics;
  webhookMetrics: WebhookMetrics;
  refusalLog: ThrottledWarn;
}

type Unauthorized = Extract<DeliveryPlan, { action: 'unauthorized' }>;

/** Counts and logs (throttled) a delivery that failed authentication, and throws its 401. */
export function refuseUnauthorized(deps: GateDeps, bucket: string, plan: Unauthorized, ip: string): never {
  deps.metrics.countWebhook(bucket, 'unauthorized');
  deps.webhookMetrics.countVerificationFailure(plan.failure);
  deps.refusalLog(plan.code, { provider: bucket, reason: plan.reason, ip }, 'webhook delivery refused: authentication');
  throw new HttpError(401, plan.code, plan.message);
}

/** The route's onRequest hook: a provider name outside the pattern is 400, missing or malformed credentials 401. */
export function webhookGate(deps: GateDeps) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const provider = (req.params as { provider?: string }).provider ?? '';
    if (!PROVIDER_NAME.test(provider)) {
      reply.header('connection', 'close');
      deps.metrics.countWebhook(UNKNOWN_PROVIDER, 'invalid_provider');
      throw new HttpError(400, WEBHOOK_CODES.INVALID_REQUEST, 'the provider name must match [a-z0-9][a-z0-9_-]{0,39}');
    }
    const failure = precheckCredentials(deps.auth, req.headers);
    if (failure !== null) {
      reply.header('connection', 'close');
      refuseUnauthorized(deps, deps.label(provider), unauthorizedPlan(failure), req.ip);
    }
  };
}
