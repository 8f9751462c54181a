// How every oncepay HTTP server speaks about the database: GET /healthz (the process is alive: 200, no database
// call), GET /readyz (db/readiness.ts: 200, or 503 with the reason), and the 503 + Retry-After answer a request
// gets while the database is away (db/unavailable.ts decides what counts). One answer function serves both the
// fastify apps (healthRoutes) and the plain node:http metrics servers (indexer/metrics.ts serveMetrics).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { httpErrorBody } from '../common/errors/http';
import type { Db } from './sql';
import { checkReadiness } from './readiness';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
} from './unavailable';

export const HEALTH_PATHS = ['/healthz', '/readyz'] as const;
export type HealthPath = (typeof HEALTH_PATHS)[number];

export interface HealthAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const RETRY_AFTER = { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) };

export function isHealthPath(p: string): p is HealthPath {
  return (HEALTH_PATHS as readonly string[]).includes(p);
}

/** The answer to GET /healthz or GET /readyz. Never throws: an unexpected probe failure is a 503 too. */
export async function answerHealth(path: HealthPath, db: Db): Promise<HealthAnswer> {
  if (path === '/healthz') return { status: 200, headers: {}, body: { ok: true } };
  try {
    const r = await checkReadiness(db);
    if (r.ready) return { status: 200, headers: {}, body: { ok: true, ready: true } };
    return {
      status: 503,
      headers: RETRY_AFTER,
      body: { code: r.code, message: r.message, ready: false, ...(r.pending ? { pending: r.pending } : {}) },
    };
  } catch (e) {
    return {
      status: 503,
      headers: RETRY_AFTER,
      body: { code: DATABASE_UNAVAILABLE, message: `readiness probe failed: ${(e as Error).message}`, ready: false },
    };
  }
}

/** fastify plugin: GET /healthz and GET /readyz (hidden from OpenAPI). */
export async function healthRoutes(app: FastifyInstance, opts: { db: Db }): Promise<void> {
  for (const path of HEALTH_PATHS) {
    app.get(path, { schema: { hide: true } }, async (_req, reply) => {
      const a = await answerHealth(path, opts.db);
      return reply.code(a.status).headers(a.headers).send(a.body);
    });
  }
}

/**
 * If `err` is a database outage, answer it as one — 503, Retry-After and { code: DATABASE_UNAVAILABLE, message }
 * (the shape both servers use for errors) — and return true. Call first thing in an error handler.
 */
export function replyIfDatabaseUnavailable(err: unknown, reply: FastifyReply): boolean {
  if (!isDatabaseUnavailable(err)) return false;
  void reply.code(503).headers(RETRY_AFTER).send(httpErrorBody(DATABASE_UNAVAILABLE, DATABASE_UNAVAILABLE_MESSAGE));
  return true;
}
