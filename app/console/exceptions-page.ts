// Exceptions, with *refund* and *resolve*: GET /console/exceptions (newest first, paged) and two POST actions that
// go through app/exception/refund.ts, the same exactly-once path as `oncepay exception refund|resolve`. A refund
// stores one payout whose payout id is the receipt's key (refund-id.ts) and links it to the exception under the
// exception's row lock; a second click, a second tab or a retry after a lost answer finds that link and stores
// nothing new, and the op PDA makes a second on-chain payment impossible anyway. The payout itself is paid by a
// payout worker (`oncepay payout serve --rpc --authority …` runs one beside this console), as every payout is.
// After each POST the browser is sent back to the list (303) with the outcome: a reload repeats nothing.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Pool } from 'pg';
import { isOncepayError } from '../../common/errors';
import { logger } from '../../common/log';
import { rows } from '../../db/sql';
import { prepareRefund, resolveException } from '../exception/refund';
import { getException } from '../exception/store';
import type { ExceptionRow } from '../exception/types';
import * as q from './page-queries';
import { ExplorerConfig } from './explorer';
import { addressLink, txLink, when } from './format';
import { Html, html } from './html';
import { actionForm, page, table } from './layout';
import { numericCursor, pageOf, pager } from './paging';
import { operatorSession } from './session-auth';

const log = logger('console');

/** The outcome line after an action, chosen from this table by the redirect's query (no text is reflected). */
const OUTCOMES: Record<string, (id: string, payout: string) => { kind: 'ok' | 'error'; text: string }> = {
  'refund-stored': (id, p) => ({
    kind: 'ok',
    text: `Exception ${id}: refund stored as payout ${p}; a payout worker pays it once.`,
  }),
  'refund-exists': (id, p) => ({
    kind: 'ok',
    text: `Exception ${id} already has refund payout ${p}: nothing new was stored.`,
  }),
  resolved: (id) => ({ kind: 'ok', text: `Exception ${id} resolved.` }),
  'already-resolved': (id) => ({ kind: 'ok', text: `Exception ${id} was already resolved.` }),
};

function flashOf(query: unknown): { kind: 'ok' | 'error'; text: string } | null {
  const { outcome, id, payout, code } = (query ?? {}) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'string' && /^[0-9]{1,18}$/.test(v) ? v : '?');
  if (typeof code === 'string' && /^ONCEPAY__[A-Z_]+$/.test(code))
    return { kind: 'error', text: `Exception ${num(id)}: refused (${code}). Nothing changed.` };
  const make = typeof outcome === 'string' ? OUTCOMES[outcome] : undefined;
  return make ? make(num(id), num(payout)) : null;
}

function back(reply: FastifyReply, params: Record<string, string>): FastifyReply {
  return reply.redirect(`/console/exceptions?${new URLSearchParams(params).toString()}`, 303);
}

function actions(e: ExceptionRow, csrf: string): Html {
  if (e.state !== 'open') return html``;
  const refundable = e.receipt.mint !== null && e.receipt.mint !== 'SOL';
  return html`${refundable ? actionForm(`/console/exceptions/${e.id}/refund`, csrf, `Refund exception ${e.id}`) : ''}${actionForm(
    `/console/exceptions/${e.id}/resolve`,
    csrf,
    `Resolve exception ${e.id}`,
    {},
    html`<label for="note-${e.id}">Note for exception ${e.id}</label
      ><input type="text" id="note-${e.id}" name="note" required maxlength="500" />`,
  )}`;
}

export const exceptionsPage: FastifyPluginAsync<{ db: Pool; explorer: ExplorerConfig }> = async (app, o) => {
  app.get('/exceptions', async (req, reply) => {
    const s = operatorSession(req);
    const ids = await rows<{ id: string }>(o.db, q.exceptionIds(numericCursor(req.query), q.PAGE_SIZE + 1));
    const { rows: idPage, next } = pageOf(ids, q.PAGE_SIZE, (r) => String(r.id));
    const list = (await Promise.all(idPage.map((r) => getException(o.db, String(r.id))))).filter(
      (e): e is ExceptionRow => e !== null,
    );
    const body = html`${table(
      'Exceptions',
      ['Id', 'Kind', 'Invoice', 'Amount', 'Signature', 'From', 'State', 'Settlement', 'Actions'],
      list.map(
        (e) =>
          html`<tr>
            <td>${e.id}</td>
            <td>${e.kind}</td>
            <td>
              ${
                e.invoiceId
                  ? html`<a href="/console/invoices/${encodeURIComponent(e.invoiceId)}">${e.invoiceId}</a>`
                  : '—'
              }
            </td>
            <td class="num">${e.amount}</td>
            <td>${txLink(e.receipt.signature, o.explorer)}</td>
            <td>${addressLink(e.receipt.source, o.explorer)}</td>
            <td class="state">${e.state}</td>
            <td>
              ${
                e.resolution?.kind === 'refund'
                  ? html`<a href="/console/payouts/${e.resolution.payoutRowId}">payout ${e.resolution.payoutRowId}</a>`
                  : e.resolution?.kind === 'resolved'
                    ? html`${e.resolution.note} (${when(e.resolution.at)})`
                    : '—'
              }
            </td>
            <td>${actions(e, s.csrf)}</td>
          </tr>`,
      ),
    )}${pager('/console/exceptions', next)}`;
    return reply.type('text/html; charset=utf-8').send(
      page('Exceptions', body, {
        operator: s.operator,
        csrf: s.csrf,
        current: '/console/exceptions',
        flash: flashOf(req.query),
      }).text,
    );
  });

  app.post<{ Params: { id: string } }>('/exceptions/:id/refund', async (req, reply) => {
    const s = operatorSession(req);
    const id = req.params.id;
    try {
      const r = await prepareRefund(o.db, id);
      log.info({ operator: s.operator, exception: id, payout: r.payout.id, created: r.created }, 'console refund');
      return back(reply, { outcome: r.created ? 'refund-stored' : 'refund-exists', id, payout: r.payout.id });
    } catch (e) {
      if (!isOncepayError(e)) throw e;
      log.warn({ operator: s.operator, exception: id, code: e.code, err: e.message }, 'console refund refused');
      return back(reply, { code: e.code, id });
    }
  });

  app.post<{ Params: { id: string }; Body: { note?: unknown } }>('/exceptions/:id/resolve', async (req, reply) => {
    const s = operatorSession(req);
    const id = req.params.id;
    const note = typeof req.body?.note === 'string' ? req.body.note.slice(0, 500) : '';
    try {
      // An empty note stays empty (NOTE_MISSING): the operator's name alone is no reason.
      const r = await resolveException(o.db, id, note.trim() ? `${note.trim()} (console: ${s.operator})` : '');
      log.info({ operator: s.operator, exception: id, changed: r.changed }, 'console resolve');
      return back(reply, { outcome: r.changed ? 'resolved' : 'already-resolved', id });
    } catch (e) {
      if (!isOncepayError(e)) throw e;
      log.warn({ operator: s.operator, exception: id, code: e.code }, 'console resolve refused');
      return back(reply, { code: e.code, id });
    }
  });
};
