// The payer's checkout page as plain server-rendered HTML (pure: no I/O). Works without JavaScript: the amount, the
// QR code (inline SVG from `qrcode`), the wallet link and the status are all in the HTML; a refresh shows the current
// status. The only script is same-origin (checkout.js beside the page), for the live status. Every text from the
// merchant (label, message) is escaped: an attacker-chosen label cannot add markup.

/** What the page shows: nothing else of the invoice (no merchant ids, no other invoice, no internals). */
export interface CheckoutView {
  checkoutId: string;
  amountTokens: string;
  /** 'SOL', or the mint address. */
  mint: string;
  label: string | null;
  message: string | null;
  paymentUrl: string;
  status: CheckoutStatus;
}

export type CheckoutStatus = 'open' | 'paid' | 'expired' | 'exception';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** The status line of each state (the page and its live script show the same words). */
export const STATUS_TEXT: Record<CheckoutStatus, string> = {
  open: 'Waiting for payment',
  paid: 'Paid',
  expired: 'This invoice has expired',
  exception: 'Overpaid / late payment: the merchant will be notified',
};

/**
 * The Content-Security-Policy of the page: nothing but its own script, stylesheet, the inline SVG and the empty
 * data: icon (without one, the browser's own /favicon.ico request answers 404, a console error).
 */
export const CHECKOUT_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function checkoutPageHtml(v: CheckoutView, qrSvg: string): string {
  const e = escapeHtml;
  const title = v.label ? `Pay ${v.label}` : 'Pay';
  const unit = v.mint === 'SOL' ? 'SOL' : `tokens of mint ${v.mint}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${e(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="checkout.css">
<script src="checkout.js" defer></script>
</head>
<body>
<main data-checkout="${e(v.checkoutId)}" data-status="${v.status}">
<h1>${e(title)}</h1>
${v.message ? `<p class="message">${e(v.message)}</p>` : ''}
<p class="amount"><span class="value">${e(v.amountTokens)}</span> <span class="unit">${e(unit)}</span></p>
<figure class="qr" role="img" aria-label="QR code of the Solana Pay request">${qrSvg}</figure>
<p><a class="wallet" href="${e(v.paymentUrl)}">Open in a wallet on this device</a></p>
<p class="status" id="status" role="status" aria-live="polite">${e(STATUS_TEXT[v.status])}</p>
<noscript><p>Refresh this page to see the latest status.</p></noscript>
</main>
</body>
</html>
`;
}
