// The console's public routes: the login form and its POST. Throttled twice (login-throttle.ts): the process-wide
// bucket before any password check, the operator's own lock in the database. An unknown name costs the same scrypt
// as a known one, and both answer the same words, so the form tells nobody which names exist.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { logger } from '../../common/log';
import { CONSOLE_CODES } from '../../common/errors/codes';
import { ThrottleLimits, createTokenBucket, lockMsAfter } from './login-throttle';
import { dummyHash, verifyPassword } from './password';
import { SESSION_COOKIE, SessionLimits, sessionCookieOptions } from './session-policy';
import { createSession, getOperatorByName, noteFailedLogin, noteGoodLogin } from './store';
import { isSecure } from './session-auth';
import { sameOrigin } from './csrf';
import { Html, html } from './html';
import { page } from './layout';

const log = logger('console');

const ENDED: Record<string, string> = {
  expired: 'Your session reached its time limit: log in again.',
  idle: 'Your session ended after a while without use: log in again.',
  out: 'You are logged out.',
};

function loginPage(message: Html | string | null, name = ''): string {
  return page(
    'Operator login',
    html`${message ? html`<p class="flash error" role="alert">${message}</p>` : ''}
      <form method="post" action="/console/login">
        <label for="name">Operator name</label
        ><input type="text" id="name" name="name" autocomplete="username" required value="${name}" />
        <label for="password">Password</label
        ><input type="password" id="password" name="password" autocomplete="current-password" required />
        <p><button type="submit">Log in</button></p>
      </form>`,
    null,
  ).text;
}

function answer(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

export interface LoginRouteOptions {
  db: Pool;
  limits: SessionLimits;
  throttle: ThrottleLimits;
}

export const loginRoutes: FastifyPluginAsync<LoginRouteOptions> = async (app: FastifyInstance, o) => {
  const bucket = createTokenBucket(o.throttle);

  app.get('/login', async (req: FastifyRequest<{ Querystring: { ended?: string } }>, reply) => {
    const ended = ENDED[String(req.query?.ended ?? '')];
    return answer(reply, 200, loginPage(ended ?? null));
  });

  app.post('/login', async (req: FastifyRequest<{ Body: { name?: unknown; password?: unknown } }>, reply) => {
    const body = (req.body ?? {}) as { name?: unknown; password?: unknown };
    const name = typeof body.name === 'string' ? body.name.slice(0, 64) : '';
    const password = typeof body.password === 'string' ? body.password.slice(0, 1024) : '';
    if (!sameOrigin(req.headers as Record<string, string | undefined>, isSecure(req))) {
      log.warn({ code: CONSOLE_CODES.CSRF_REJECTED }, 'console login from another origin refused');
      return answer(reply, 403, loginPage('This form did not come from this console. Nothing happened.'));
    }
    if (!bucket.take(Date.now())) {
      log.warn({ code: CONSOLE_CODES.LOGIN_THROTTLED, scope: 'process' }, 'console login throttled');
      return answer(
        reply.header('retry-after', '1'),
        429,
        loginPage('Too many login attempts: wait and try again.', name),
      );
    }
    const op = await getOperatorByName(o.db, name);
    if (op?.lockedUntil && op.lockedUntil > op.now) {
      log.warn({ code: CONSOLE_CODES.LOGIN_THROTTLED, operator: op.name }, 'console login throttled');
      const wait = Math.ceil((op.lockedUntil.getTime() - op.now.getTime()) / 1000);
      return answer(
        reply.header('retry-after', String(wait)),
        429,
        loginPage('Too many login attempts: wait and try again.', name),
      );
    }
    const ok = await verifyPassword(password, op?.passwordHash ?? (await dummyHash()));
    if (!op || !ok) {
      if (op) await noteFailedLogin(o.db, op.id, lockMsAfter(op.failedLogins + 1, o.throttle));
      log.warn({ code: CONSOLE_CODES.LOGIN_FAILED }, 'console login failed');
      return answer(reply, 401, loginPage('Wrong operator name or password.', name));
    }
    await noteGoodLogin(o.db, op.id);
    const sid = await createSession(o.db, op.id, o.limits);
    log.info({ operator: op.name }, 'console login');
    void reply.setCookie(SESSION_COOKIE, sid, sessionCookieOptions(isSecure(req), o.limits.absoluteMs));
    return reply.redirect('/console/invoices', 303);
  });
};
