// Payouts with their attempt journal and the op account that proves them: GET /console/payouts (every merchant's,
// newest first, paged) and GET /console/payouts/:id (app/payout/view.ts's view: each attempt's signature, status
// and blockhash, and the proof — the result signature and the op PDA — linked to the explorer).
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { rows } from '../../db/sql';
import { getPayout, listAttempts } from '../payout/store';
import { payoutView } from '../payout/view';
import * as q from './page-queries';
import { ExplorerConfig } from './explorer';
import { addressLink, txLink } from './format';
import { html } from './html';
import { page, table } from './layout';
import { numericCursor, pageOf, pager } from './paging';
import { operatorSession } from './session-auth';

export const payoutsPage: FastifyPluginAsync<{ db: Pool; explorer: ExplorerConfig }> = async (app, o) => {
  app.get('/payouts', async (req, reply) => {
    const s = operatorSession(req);
    const ids = await rows<{ id: string }>(o.db, q.listPayouts(numericCursor(req.query), q.PAGE_SIZE + 1));
    const { rows: idPage, next } = pageOf(ids, q.PAGE_SIZE, (r) => String(r.id));
    const names = new Map(
      (await rows<{ id: string; name: string }>(o.db, q.merchantNames())).map((m) => [String(m.id), m.name]),
    );
    const list = (await Promise.all(idPage.map((r) => getPayout(o.db, String(r.id))))).filter((p) => p !== null);
    const body = html`${table(
      'Payouts',
      ['Id', 'Merchant', 'Payout id', 'State', 'Amount', 'Recipient', 'Proof'],
      list.map(
        (p) =>
          html`<tr>
            <td><a href="/console/payouts/${p.id}">${p.id}</a></td>
            <td>${names.get(p.merchantId) ?? p.merchantId}</td>
            <td>${p.merchantPayoutId}</td>
            <td>${p.state}</td>
            <td class="num">${p.amount}</td>
            <td>${addressLink(p.recipientToken, o.explorer)}</td>
            <td>${txLink(p.resultSignature, o.explorer)}</td>
          </tr>`,
      ),
    )}${pager('/console/payouts', next)}`;
    return reply
      .type('text/html; charset=utf-8')
      .send(page('Payouts', body, { operator: s.operator, csrf: s.csrf, current: '/console/payouts' }).text);
  });

  app.get<{ Params: { id: string } }>('/payouts/:id', async (req, reply) => {
    const s = operatorSession(req);
    const ctx = { operator: s.operator, csrf: s.csrf, current: '/console/payouts' };
    const row = /^[0-9]{1,18}$/.test(req.params.id) ? await getPayout(o.db, req.params.id) : null;
    if (!row) {
      return reply
        .code(404)
        .type('text/html; charset=utf-8')
        .send(page('Payout not found', html`<p>No payout <code>${req.params.id}</code>.</p>`, ctx).text);
    }
    const v = payoutView(row, await listAttempts(o.db, row.id));
    const body = html`<dl>
        <dt>Payout id</dt>
        <dd>${v.payoutId}</dd>
        <dt>State</dt>
        <dd>${v.state}${v.error ? html` — ${v.error}` : ''}</dd>
        <dt>Amount</dt>
        <dd>${v.amount} base units of ${addressLink(v.mint, o.explorer)}</dd>
        <dt>Recipient</dt>
        <dd>${addressLink(v.recipient, o.explorer)}</dd>
        <dt>Op id</dt>
        <dd><code>${v.opId}</code></dd>
        <dt>Op account (the proof: created once by the program)</dt>
        <dd>${addressLink(v.opPda, o.explorer)}</dd>
        <dt>Proof</dt>
        <dd>
          ${v.proof ? html`${txLink(v.proof.signature, o.explorer)} at slot ${v.proof.slot ?? '—'}` : 'not executed yet'}
        </dd>
        <dt>Merchant account</dt>
        <dd>${addressLink(v.merchant, o.explorer)}</dd>
      </dl>
      ${table(
        'Attempt journal',
        ['Attempt', 'Signature', 'Status', 'Blockhash', 'Last valid height', 'Slot', 'Sends', 'Error', 'Created'],
        v.attempts.map(
          (a) =>
            html`<tr>
              <td class="num">${a.attemptNo}</td>
              <td>${txLink(a.signature, o.explorer)}</td>
              <td>${a.status}</td>
              <td><code>${a.blockhash}</code></td>
              <td class="num">${a.lastValidBlockHeight}</td>
              <td class="num">${a.slot ?? '—'}</td>
              <td class="num">${a.sendCount}</td>
              <td>${a.error ?? '—'}</td>
              <td>${a.createdAt}</td>
            </tr>`,
        ),
      )}`;
    return reply.type('text/html; charset=utf-8').send(page(`Payout ${v.id}`, body, ctx).text);
  });
};
