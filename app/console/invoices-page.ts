// Invoices and their receipts: GET /console/invoices (newest first, paged) and GET /console/invoices/:id (the
// receipts credited to it or raised as exceptions, each signature linked to the explorer).
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { one, rows } from '../../db/sql';
import type { ReceiptSqlColumns } from '../../indexer/ledger/types';
import * as q from './page-queries';
import { ExplorerConfig } from './explorer';
import { addressLink, txLink, when } from './format';
import { html } from './html';
import { page, table } from './layout';
import { pageOf, pager, textCursor } from './paging';
import { operatorSession } from './session-auth';

interface InvoiceSqlRow {
  id: string;
  merchant: string;
  mint: string;
  expected_amount: string;
  credited_amount: string;
  status: string;
  reference_key: string | null;
  deposit_address: string | null;
  created_at: Date;
  paid_at: Date | null;
  receipts: number;
  exceptions: number;
}

interface ReceiptSqlRow extends ReceiptSqlColumns {
  id: string;
  amount: string;
  first_source: string;
  created_at: Date;
}

export const invoicesPage: FastifyPluginAsync<{ db: Pool; explorer: ExplorerConfig }> = async (app, o) => {
  app.get('/invoices', async (req, reply) => {
    const s = operatorSession(req);
    const { rows: list, next } = pageOf(
      await rows<InvoiceSqlRow>(o.db, q.listInvoices(textCursor(req.query), q.PAGE_SIZE + 1)),
      q.PAGE_SIZE,
      (r) => r.id,
    );
    const body = html`${table(
      'Invoices',
      ['Invoice', 'Merchant', 'Status', 'Expected', 'Credited', 'Mint', 'Receipts', 'Exceptions', 'Created'],
      list.map(
        (i) =>
          html`<tr>
            <td><a href="/console/invoices/${encodeURIComponent(i.id)}">${i.id}</a></td>
            <td>${i.merchant}</td>
            <td>${i.status}</td>
            <td class="num">${i.expected_amount}</td>
            <td class="num">${i.credited_amount}</td>
            <td>${addressLink(i.mint, o.explorer)}</td>
            <td class="num">${i.receipts}</td>
            <td class="num">${i.exceptions}</td>
            <td>${when(i.created_at)}</td>
          </tr>`,
      ),
    )}${pager('/console/invoices', next)}`;
    return reply
      .type('text/html; charset=utf-8')
      .send(page('Invoices', body, { operator: s.operator, csrf: s.csrf, current: '/console/invoices' }).text);
  });

  app.get<{ Params: { id: string } }>('/invoices/:id', async (req, reply) => {
    const s = operatorSession(req);
    const ctx = { operator: s.operator, csrf: s.csrf, current: '/console/invoices' };
    const inv = await one<InvoiceSqlRow>(o.db, q.getInvoice(req.params.id));
    if (!inv) {
      return reply
        .code(404)
        .type('text/html; charset=utf-8')
        .send(page('Invoice not found', html`<p>No invoice <code>${req.params.id}</code>.</p>`, ctx).text);
    }
    const receipts = await rows<ReceiptSqlRow>(o.db, q.receiptsOfInvoice(inv.id, 1000));
    const body = html`<dl>
        <dt>Status</dt>
        <dd>${inv.status}${inv.paid_at ? html` (paid ${when(inv.paid_at)})` : ''}</dd>
        <dt>Amount</dt>
        <dd>${inv.credited_amount} of ${inv.expected_amount} base units credited</dd>
        <dt>Mint</dt>
        <dd>${addressLink(inv.mint, o.explorer)}</dd>
        <dt>Reference key</dt>
        <dd>${addressLink(inv.reference_key, o.explorer)}</dd>
        <dt>Deposit address</dt>
        <dd>${addressLink(inv.deposit_address, o.explorer)}</dd>
        <dt>Merchant</dt>
        <dd>${inv.merchant}</dd>
      </dl>
      ${table(
        'Receipts',
        ['Signature', 'Instruction', 'Inner', 'Slot', 'From', 'Amount', 'First seen by'],
        receipts.map(
          (r) =>
            html`<tr>
              <td>${txLink(r.signature, o.explorer)}</td>
              <td class="num">${r.ix_index}</td>
              <td class="num">${r.inner_index}</td>
              <td class="num">${r.slot ?? '—'}</td>
              <td>${addressLink(r.source, o.explorer)}</td>
              <td class="num">${r.amount}</td>
              <td>${r.first_source}</td>
            </tr>`,
        ),
      )}
      <p><a href="/console/exceptions">Exceptions</a></p>`;
    return reply.type('text/html; charset=utf-8').send(page(`Invoice ${inv.id}`, body, ctx).text);
  });
};
