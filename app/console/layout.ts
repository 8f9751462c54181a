// The page shell every console page shares: one stylesheet, a navigation, the operator's name and a logout form
// (a POST with the CSRF token, like every action). Pages hand in their body as Html (html.ts), so nothing reaches
// the output unescaped.
import { CSRF_FIELD } from './csrf';
import { Html, html } from './html';

export const CONSOLE_NAV: ReadonlyArray<[path: string, label: string]> = [
  ['/console/invoices', 'Invoices'],
  ['/console/exceptions', 'Exceptions'],
  ['/console/payouts', 'Payouts'],
  ['/console/dead-letters', 'Dead letters'],
  ['/console/figures', 'Figures'],
];

export interface PageContext {
  operator: string;
  csrf: string;
  /** The nav entry of this page (aria-current). */
  current: string;
  /** A one-line outcome of the last action (shown in a status region). */
  flash?: { kind: 'ok' | 'error'; text: string } | null;
}

/** A POST form of one button carrying the session's CSRF token (and hidden fields). */
export function actionForm(
  action: string,
  csrf: string,
  label: string,
  fields: Record<string, string> = {},
  extra: Html = html``,
): Html {
  return html`<form method="post" action="${action}" class="action">
    <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />${Object.entries(fields).map(
      ([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`,
    )}${extra}<button type="submit">${label}</button>
  </form>`;
}

export function page(title: string, body: Html, ctx: PageContext | null): Html {
  const nav = ctx
    ? html`<header>
        <nav aria-label="Console">
          <ul>
            ${CONSOLE_NAV.map(
              ([path, label]) =>
                html`<li><a href="${path}" ${ctx.current === path ? html` aria-current="page"` : ''}>${label}</a></li>`,
            )}
          </ul>
        </nav>
        <div class="who">
          Signed in as <strong>${ctx.operator}</strong> ${actionForm('/console/logout', ctx.csrf, 'Log out')}
        </div>
      </header>`
    : html``;
  const flash = ctx?.flash
    ? html`<p role="status" class="flash ${ctx.flash.kind}">${ctx.flash.text}</p>`
    : html`<p role="status" class="flash"></p>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · oncepay console</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/console/console.css" />
      </head>
      <body>
        ${nav}
        <main>
          <h1>${title}</h1>
          ${flash}${body}
        </main>
      </body>
    </html> `;
}

/** A table with a caption and header row; rows are already Html. */
export function table(caption: string, headers: string[], rows: Html[]): Html {
  if (rows.length === 0) return html`<p>No ${caption.toLowerCase()}.</p>`;
  return html`<table>
    <caption>
      ${caption}
    </caption>
    <thead>
      <tr>
        ${headers.map((h) => html`<th scope="col">${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}
