// Small renderings the pages share (pure): a signature or address linked to the explorer, a time, an amount.
import { ExplorerConfig, explorerUrl } from './explorer';
import { Html, html, safeHref } from './html';

export function txLink(sig: string | null, ex: ExplorerConfig): Html {
  if (!sig) return html`—`;
  return html`<a href="${safeHref(explorerUrl('tx', sig, ex))}" rel="noreferrer"><code>${sig}</code></a>`;
}

export function addressLink(a: string | null, ex: ExplorerConfig): Html {
  if (!a || a === 'SOL') return html`${a ?? '—'}`;
  return html`<a href="${safeHref(explorerUrl('address', a, ex))}" rel="noreferrer"><code>${a}</code></a>`;
}

export function when(d: Date | null | undefined): string {
  return d
    ? d
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '—';
}
