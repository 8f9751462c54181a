// Keyset paging of the console's lists (pure): the `before` cursor of a query string and the link to the next page.
import { OncepayError } from '../../common/errors';
import { CONSOLE_CODES } from '../../common/errors/codes';
import { Html, html } from './html';

/** The numeric row-id cursor of `?before=`, or null for the first page; anything else is refused. */
export function numericCursor(q: unknown): string | null {
  const v = (q as { before?: unknown } | undefined)?.before;
  if (v === undefined || v === '') return null;
  if (typeof v !== 'string' || !/^[0-9]{1,18}$/.test(v))
    throw new OncepayError(CONSOLE_CODES.CURSOR_INVALID, 'before: a row id (digits)', { field: 'before' });
  return v;
}

/** A text cursor (an invoice id), bounded in length. */
export function textCursor(q: unknown): string | null {
  const v = (q as { before?: unknown } | undefined)?.before;
  if (v === undefined || v === '') return null;
  if (typeof v !== 'string' || v.length > 200)
    throw new OncepayError(CONSOLE_CODES.CURSOR_INVALID, 'before: an invoice id', { field: 'before' });
  return v;
}

/** The rows of one page out of up to size + 1 fetched, and the cursor of the next page (null: last page). */
export function pageOf<T>(fetched: T[], size: number, key: (row: T) => string): { rows: T[]; next: string | null } {
  const rows = fetched.slice(0, size);
  return { rows, next: fetched.length > size ? key(rows[rows.length - 1]) : null };
}

export function pager(path: string, next: string | null): Html {
  return html`<p class="pager">
    <a href="${path}">First page</a>${
      next ? html`<a href="${path}?before=${encodeURIComponent(next)}">Next page</a>` : ''
    }
  </p>`;
}
