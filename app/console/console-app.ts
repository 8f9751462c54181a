// The operator console as one fastify plugin, registered by app/api/build-api-app.ts under /console: its own
// form and cookie parsers, its own security headers (security-headers.ts) and HTML error pages, the public login
// routes and stylesheet, and every other page inside the session's context (session-auth.ts). Nothing here is
// visible to the merchant API's routes, and theirs are not visible here.
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { logger } from '../../common/log';
import { isOncepayError } from '../../common/errors';
import { CONSOLE_HEADERS } from './security-headers';
import { DEFAULT_SESSION_LIMITS, SessionLimits } from './session-policy';
import { DEFAULT_THROTTLE, ThrottleLimits } from './login-throttle';
import { ExplorerConfig } from './explorer';
import { CONSOLE_CSS } from './stylesheet';
import { html } from './html';
import { page } from './layout';
import { loginRoutes } from './login-routes';
import { clearSessionCookie, operatorSession, registerOperatorRoutes } from './session-auth';
import { deleteSession } from './store';
import { invoicesPage } from './invoices-page';
import { exceptionsPage } from './exceptions-page';
import { payoutsPage } from './payouts-page';
import { deadLettersPage } from './dead-letters-page';
import { figuresPage } from './figures-page';

export interface ConsoleOptions {
  db: Pool;
  explorer: ExplorerConfig;
  limits?: Partial<SessionLimits>;
  throttle?: Partial<ThrottleLimits>;
  chainTip?: () => Promise<bigint | null>;
}

const log = logger('console');

const pages: FastifyPluginAsync<
  Required<Pick<ConsoleOptions, 'db' | 'explorer'>> & Pick<ConsoleOptions, 'chainTip'>
> = async (app, o) => {
  app.get('/', async (_req, reply) => reply.redirect('/console/invoices', 303));
  app.post('/logout', async (req, reply) => {
    const s = operatorSession(req);
    await deleteSession(o.db, s.id);
    log.info({ operator: s.operator }, 'console logout');
    clearSessionCookie(req, reply);
    return reply.redirect('/console/login?ended=out', 303);
  });
  await app.register(invoicesPage, o);
  await app.register(exceptionsPage, o);
  await app.register(payoutsPage, o);
  await app.register(deadLettersPage, o);
  await app.register(figuresPage, o);
};

export const consoleApp: FastifyPluginAsync<ConsoleOptions> = async (app: FastifyInstance, o) => {
  const limits = { ...DEFAULT_SESSION_LIMITS, ...o.limits };
  const throttle = { ...DEFAULT_THROTTLE, ...o.throttle };
  await app.register(formbody);
  await app.register(cookie);
  app.addHook('onSend', async (_req, reply, payload) => {
    for (const [k, v] of Object.entries(CONSOLE_HEADERS)) void reply.header(k, v);
    return payload;
  });
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const bad = isOncepayError(err) || (err.statusCode !== undefined && err.statusCode < 500);
    const code = isOncepayError(err) ? err.code : bad ? 'BAD_REQUEST' : 'INTERNAL';
    if (bad) log.warn({ code, url: req.url, err: err.message }, 'console request refused');
    else log.error({ url: req.url, err: err.message, stack: err.stack }, 'console request failed');
    void reply
      .code(bad ? 400 : 500)
      .type('text/html; charset=utf-8')
      .send(
        page(
          bad ? 'Bad request' : 'Something went wrong',
          html`<p>
            ${bad ? `The request was refused (${code}). Nothing changed.` : 'The console could not answer; see its log.'}
            <a href="/console/invoices">Back to the console</a>.
          </p>`,
          null,
        ).text,
      );
  });
  app.setNotFoundHandler((_req, reply) => {
    void reply
      .code(404)
      .type('text/html; charset=utf-8')
      .send(page('Not found', html`<p>No such console page. <a href="/console/invoices">Invoices</a>.</p>`, null).text);
  });
  app.get('/console.css', async (_req, reply) => reply.type('text/css; charset=utf-8').send(CONSOLE_CSS));
  await app.register(loginRoutes, { db: o.db, limits, throttle });
  await registerOperatorRoutes(app, { db: o.db, limits }, pages, {
    db: o.db,
    explorer: o.explorer,
    chainTip: o.chainTip,
  });
};
