// The console's authenticated context. `registerOperatorRoutes` opens an encapsulated fastify context whose hooks
// run for the routes registered inside it and for no other (the rule follows the route table, never a URL prefix
// test, as app/api/api-key-auth.ts does for merchants):
// - onRequest: the session cookie must name a live session (not past its absolute or idle limit); otherwise the
//   request is answered with a redirect to the login page (303: a POST is not repeated) and nothing runs.
// - preHandler, on every POST: the form's CSRF token must equal the session's and the Origin must be this server's;
//   otherwise 403 and nothing runs.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { logger } from '../../common/log';
import { OncepayError } from '../../common/errors';
import { CONSOLE_CODES } from '../../common/errors/codes';
import { CSRF_FIELD, csrfTokenMatches, sameOrigin } from './csrf';
import { SESSION_COOKIE, SessionLimits, sessionCookieOptions, sessionVerdict } from './session-policy';
import { deleteSession, getSession, touchSession } from './store';
import { html } from './html';
import { page } from './layout';

export interface OperatorSession {
  id: string;
  operator: string;
  csrf: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    operatorSession: OperatorSession | null;
  }
}

const log = logger('console');

/** The session the hook put on the request (a route inside the context always has one). */
export function operatorSession(req: FastifyRequest): OperatorSession {
  if (!req.operatorSession)
    throw new OncepayError(CONSOLE_CODES.OUTSIDE_SESSION, 'console route outside the authenticated context');
  return req.operatorSession;
}

export function isSecure(req: FastifyRequest): boolean {
  return req.protocol === 'https';
}

export function clearSessionCookie(req: FastifyRequest, reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(isSecure(req), 0));
}

function toLogin(req: FastifyRequest, reply: FastifyReply, why: string): FastifyReply {
  clearSessionCookie(req, reply);
  return reply.redirect(`/console/login${why ? `?ended=${why}` : ''}`, 303);
}

export async function registerOperatorRoutes<O extends object>(
  app: FastifyInstance,
  o: { db: Pool; limits: SessionLimits },
  routes: FastifyPluginAsync<O>,
  routeOptions: O,
): Promise<void> {
  if (!app.hasRequestDecorator('operatorSession')) app.decorateRequest('operatorSession', null);
  await app.register(async function operatorScope(scope: FastifyInstance) {
    scope.addHook('onRequest', async (req, reply) => {
      const id = req.cookies[SESSION_COOKIE];
      if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return toLogin(req, reply, '');
      const s = await getSession(o.db, id);
      if (!s) return toLogin(req, reply, '');
      const verdict = sessionVerdict(s, s.now, o.limits);
      if (verdict !== 'live') {
        await deleteSession(o.db, id);
        log.info({ operator: s.operator, verdict }, 'console session ended');
        return toLogin(req, reply, verdict);
      }
      await touchSession(o.db, id);
      req.operatorSession = { id, operator: s.operator, csrf: s.csrfToken };
    });
    scope.addHook('preHandler', async (req, reply) => {
      if (req.method !== 'POST') return;
      const s = operatorSession(req);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const tokenOk = csrfTokenMatches(s.csrf, body[CSRF_FIELD]);
      const originOk = sameOrigin(req.headers as Record<string, string | undefined>, isSecure(req));
      if (tokenOk && originOk) return;
      log.warn(
        { code: CONSOLE_CODES.CSRF_REJECTED, operator: s.operator, url: req.url, tokenOk, originOk },
        'console form refused',
      );
      return reply
        .code(403)
        .type('text/html; charset=utf-8')
        .send(
          page(
            'Refused',
            html`<p>
              This form did not come from this console's own page (${CONSOLE_CODES.CSRF_REJECTED}). Nothing changed.
              <a href="/console/invoices">Back to the console</a>.
            </p>`,
            null,
          ).text,
        );
    });
    await scope.register(routes, routeOptions);
  });
}
