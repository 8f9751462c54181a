// Authorization: Bearer <api key>. Keys are stored as sha256 hex only; the merchant found is put on the request.
import { createHash } from 'crypto';
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Pool } from 'pg';
import { MerchantRow, getMerchantByApiKeyHash } from '../payout/queries';
import { ApiError } from './errors';

declare module 'fastify' {
  interface FastifyRequest {
    oncepayMerchant: MerchantRow | null;
  }
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function registerApiKeyAuth(app: FastifyInstance, db: Pool, prefix: string): void {
  app.decorateRequest('oncepayMerchant', null);
  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (!req.url.startsWith(prefix)) return;
    const h = req.headers.authorization;
    const m = typeof h === 'string' ? /^Bearer ([\x21-\x7e]{16,512})$/.exec(h) : null;
    if (!m) throw new ApiError('UNAUTHORIZED');
    const merchant = await getMerchantByApiKeyHash(db, hashApiKey(m[1]));
    if (!merchant) throw new ApiError('UNAUTHORIZED');
    req.oncepayMerchant = merchant;
  });
}
