// The figures the alert rules watch (deploy/prometheus/oncepay.rules.yml), read from their durable sources so the
// API process shows them without the indexer's /metrics: duplicates per source (receipt_delivery_counts, behind
// oncepay_receipt_duplicates_total → OncepayDuplicateRateSpike), checkpoints (behind oncepay_checkpoint_lag_slots →
// OncepayCheckpointLagHigh at 1000 slots, …Critical at 10000; the lag is shown when the console knows the chain tip),
// the outbox (depth, oldest age, dead → OncepayOutboxDeadLetter, OncepayOutboxOldestPendingTooOld at 1800 s), exceptions per state
// and open payout attempts (OncepayPayoutAttemptUncertain at 600 s).
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { rows } from '../../db/sql';
import { readOutboxStats } from '../../indexer/outbox';
import { exceptionTotals } from '../exception/store';
import { EXCEPTION_STATES } from '../exception/types';
import { openAttemptStats } from '../payout/store';
import * as q from './page-queries';
import { when } from './format';
import { html } from './html';
import { page, table } from './layout';
import { operatorSession } from './session-auth';

export const CHECKPOINT_LAG_WARNING_SLOTS = 1000n;

export interface FiguresOptions {
  db: Pool;
  /** The chain tip (finalized slot) per cluster, when the console has an RPC endpoint; lag is tip − checkpoint. */
  chainTip?: () => Promise<bigint | null>;
}

export const figuresPage: FastifyPluginAsync<FiguresOptions> = async (app, o) => {
  app.get('/figures', async (req, reply) => {
    const s = operatorSession(req);
    const [counts, cps, outbox, exceptions, attempts, tip] = await Promise.all([
      rows<{
        cluster: string;
        source: string;
        delivered: string;
        inserted: string;
        duplicates: string;
        updated_at: Date;
      }>(o.db, q.deliveryCounts()),
      rows<{ cluster: string; source: string; slot: string; updated_at: Date; age_seconds: number }>(
        o.db,
        q.checkpoints(),
      ),
      readOutboxStats(o.db),
      exceptionTotals(o.db),
      openAttemptStats(o.db),
      o.chainTip ? o.chainTip().catch(() => null) : Promise.resolve(null),
    ]);
    const body = html`${table(
      'Receipt deliveries per source',
      ['Cluster', 'Source', 'Delivered', 'Inserted', 'Duplicates', 'Updated'],
      counts.map(
        (c) =>
          html`<tr>
            <td>${c.cluster}</td>
            <td>${c.source}</td>
            <td class="num">${c.delivered}</td>
            <td class="num">${c.inserted}</td>
            <td class="num">${c.duplicates}</td>
            <td>${when(c.updated_at)}</td>
          </tr>`,
      ),
    )}${table(
      'Checkpoints',
      ['Cluster', 'Source', 'Slot', 'Lag (slots)', 'Last moved'],
      cps.map((c) => {
        const lag = tip === null ? null : tip - BigInt(c.slot);
        return html`<tr>
          <td>${c.cluster}</td>
          <td>${c.source}</td>
          <td class="num">${c.slot}</td>
          <td class="num">
            ${
              lag === null
                ? 'no chain tip known'
                : lag > CHECKPOINT_LAG_WARNING_SLOTS
                  ? html`<strong>${lag}</strong>`
                  : lag
            }
          </td>
          <td>${when(c.updated_at)} (${Math.round(c.age_seconds)} s ago)</td>
        </tr>`;
      }),
    )}${table(
      'Fulfilment outbox',
      ['To deliver', 'Oldest waiting (s)', 'Dead letters'],
      [
        html`<tr>
          <td class="num">${outbox.depth}</td>
          <td class="num">${Math.round(outbox.oldestAgeSeconds)}</td>
          <td class="num">${outbox.dead}</td>
        </tr>`,
      ],
    )}${table(
      'Exceptions per state',
      ['State', 'Count', 'Amount (base units)'],
      EXCEPTION_STATES.map(
        (st) =>
          html`<tr>
            <td>${st}</td>
            <td class="num">${exceptions[st].count}</td>
            <td class="num">${exceptions[st].amount}</td>
          </tr>`,
      ),
    )}${table(
      'Payout attempts not yet settled',
      ['Open', 'Oldest (s)'],
      [
        html`<tr>
          <td class="num">${attempts.open}</td>
          <td class="num">${Math.round(attempts.oldestAgeSeconds)}</td>
        </tr>`,
      ],
    )}`;
    return reply
      .type('text/html; charset=utf-8')
      .send(page('Figures', body, { operator: s.operator, csrf: s.csrf, current: '/console/figures' }).text);
  });
};
