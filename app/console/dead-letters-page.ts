// Outbox dead letters with *replay*: GET /console/dead-letters and POST /console/dead-letters/:id/replay, which is
// the outbox's own replay (`oncepay outbox replay`, indexer/outbox: the row back to pending with a fresh attempt
// budget, same fulfilment id, same Idempotency-Key). A second click finds the row no longer dead and changes
// nothing; the receiver dedups on the key if a delivery is repeated anyway.
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { isOncepayError } from '../../common/errors';
import { logger } from '../../common/log';
import { rows } from '../../db/sql';
import { replayDeadLetters } from '../../indexer/outbox';
import * as q from './page-queries';
import { when } from './format';
import { html } from './html';
import { actionForm, page, table } from './layout';
import { numericCursor, pageOf, pager } from './paging';
import { operatorSession } from './session-auth';

const log = logger('console');

interface DeadSqlRow {
  id: string;
  fulfilment_id: string;
  merchant: string;
  topic: string;
  attempts: number;
  last_error: string | null;
  last_status: number | null;
  updated_at: Date;
}

interface DeliveredSqlRow {
  id: string;
  fulfilment_id: string;
  merchant: string;
  attempts: number;
  last_status: number | null;
  delivered_at: Date | null;
}

function flashOf(query: unknown): { kind: 'ok' | 'error'; text: string } | null {
  const { outcome, id } = (query ?? {}) as Record<string, unknown>;
  const n = typeof id === 'string' && /^[0-9]{1,18}$/.test(id) ? id : '?';
  if (outcome === 'replayed') return { kind: 'ok', text: `Dead letter ${n} is queued for delivery again.` };
  if (outcome === 'not-dead')
    return { kind: 'ok', text: `Outbox row ${n} is not dead (already replayed?): nothing changed.` };
  return null;
}

export const deadLettersPage: FastifyPluginAsync<{ db: Pool }> = async (app, o) => {
  app.get('/dead-letters', async (req, reply) => {
    const s = operatorSession(req);
    const { rows: list, next } = pageOf(
      await rows<DeadSqlRow>(o.db, q.listDeadLetters(numericCursor(req.query), q.PAGE_SIZE + 1)),
      q.PAGE_SIZE,
      (r) => String(r.id),
    );
    const delivered = await rows<DeliveredSqlRow>(o.db, q.recentDeliveries(10));
    const body = html`${table(
      'Dead letters',
      ['Outbox id', 'Fulfilment', 'Merchant', 'Topic', 'Attempts', 'Last status', 'Last error', 'Dead since', 'Action'],
      list.map(
        (d) =>
          html`<tr>
            <td>${d.id}</td>
            <td><code>${d.fulfilment_id}</code></td>
            <td>${d.merchant}</td>
            <td>${d.topic}</td>
            <td class="num">${d.attempts}</td>
            <td class="num">${d.last_status ?? '—'}</td>
            <td>${d.last_error ?? '—'}</td>
            <td>${when(d.updated_at)}</td>
            <td>${actionForm(`/console/dead-letters/${d.id}/replay`, s.csrf, `Replay ${d.id}`)}</td>
          </tr>`,
      ),
    )}${pager('/console/dead-letters', next)}${table(
      'Recently delivered',
      ['Outbox id', 'Fulfilment', 'Merchant', 'Attempts', 'Status', 'Delivered'],
      delivered.map(
        (d) =>
          html`<tr>
            <td>${d.id}</td>
            <td><code>${d.fulfilment_id}</code></td>
            <td>${d.merchant}</td>
            <td class="num">${d.attempts}</td>
            <td class="num">${d.last_status ?? '—'}</td>
            <td>${when(d.delivered_at)}</td>
          </tr>`,
      ),
    )}`;
    return reply.type('text/html; charset=utf-8').send(
      page('Dead letters', body, {
        operator: s.operator,
        csrf: s.csrf,
        current: '/console/dead-letters',
        flash: flashOf(req.query),
      }).text,
    );
  });

  app.post<{ Params: { id: string } }>('/dead-letters/:id/replay', async (req, reply) => {
    const s = operatorSession(req);
    const id = req.params.id;
    let outcome = 'not-dead';
    if (/^[0-9]{1,18}$/.test(id)) {
      try {
        await replayDeadLetters(o.db, { id });
        outcome = 'replayed';
        log.info({ operator: s.operator, outbox: id }, 'console replay');
      } catch (e) {
        if (!isOncepayError(e)) throw e;
      }
    }
    return reply.redirect(`/console/dead-letters?${new URLSearchParams({ outcome, id }).toString()}`, 303);
  });
};
