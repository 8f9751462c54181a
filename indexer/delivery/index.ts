export { createWebhookDelivery } from './webhook';
export type { DeliveryRequest, DeliveryResult, DeliveryTarget, WebhookDeliveryOptions } from './webhook';
export { signBody, verifySignature, SIGNATURE_HEADER } from './signature';
