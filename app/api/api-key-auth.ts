// Authorization: Bearer <api key>. Keys are stored as sha256 hex only; the merchant found is put on the request.
//
// Authentication belongs to the routes, never to URL strings: `registerAuthenticatedRoutes` opens an encapsulated
// fastify context whose onRequest hook authenticates, and the routes registered in it are the only ones that hook
// runs for. Whatever spelling of a path fastify routes to one of them (percent-encoded, absolute-form, …) runs the
// hook; a spelling it does not route is a 404 before any handler. Public routes (OpenAPI, metrics, health) are
// registered outside.
import { createHash } from 'crypto';
import { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Pool } from 'pg';
import { MerchantRow, getMerchantByApiKeyHash } from '../merchant/store';
import { ApiError } from './errors';

declare module 'fastify' {
  interface FastifyRequest {
    oncepayMerchant: MerchantRow | null;
  }
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * The key of an `Authorization: Bearer <key>` header, or null. The scheme is case-insensitive (RFC 9110 §11.1),
 * the key is not; keys are 16–512 visible ASCII characters.
 */
export function bearerKey(header: string | undefined): string | null {
  if (typeof header !== 'string') return null;
  const m = /^([A-Za-z]+) +([\x21-\x7e]{16,512})$/.exec(header);
  return m && m[1].toLowerCase() === 'bearer' ? m[2] : null;
}

/** The merchant the auth hook put on the request; UNAUTHORIZED if a route somehow runs without it. */
export function authenticatedMerchant(req: FastifyRequest): MerchantRow {
  if (!req.oncepayMerchant) throw new ApiError('UNAUTHORIZED');
  return req.oncepayMerchant;
}

/** Register `routes` in their own context, behind the API-key hook. */
export async function registerAuthenticatedRoutes<O extends object>(
  app: FastifyInstance,
  db: Pool,
  routes: FastifyPluginAsync<O>,
  routeOptions: O,
): Promise<void> {
  if (!app.hasRequestDecorator('oncepayMerchant')) app.decorateRequest('oncepayMerchant', null);
  await app.register(async function authenticated(scope: FastifyInstance) {
    scope.addHook('onRequest', async (req: FastifyRequest) => {
      const key = bearerKey(req.headers.authorization);
      if (key === null) throw new ApiError('UNAUTHORIZED');
      const merchant = await getMerchantByApiKeyHash(db, hashApiKey(key));
      if (!merchant) throw new ApiError('UNAUTHORIZED');
      req.oncepayMerchant = merchant;
    });
    await scope.register(routes, routeOptions);
  });
}
