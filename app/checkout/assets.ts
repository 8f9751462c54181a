// The checkout page's stylesheet and live-status script, served same-origin (the CSP allows nothing inline). The
// script opens <id>/events beside the page (/pay/<id>/events: server-sent events) and writes each status it is told
// into the status line. Every address the page names is relative to the page, so it works unchanged behind a proxy
// that serves the API under a path prefix (--public-url https://shop.example/pay-api).
import { STATUS_TEXT } from './page-html';

export const CHECKOUT_CSS = `body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#111}
main{max-width:26rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin:0 0 .5rem}.amount{font-size:1.6rem;font-weight:600}.unit{font-size:1rem;color:#333;overflow-wrap:anywhere}
.qr svg{width:100%;max-width:18rem;height:auto;display:block;margin:0 auto}
a.wallet{display:inline-block;padding:.6rem 1rem;background:#3b2a8f;color:#fff;border-radius:8px;text-decoration:none}
.status{font-size:1.2rem;font-weight:600;padding:.5rem;border-radius:8px;background:#eef}
main[data-status="paid"] .status{background:#d6f5dd;color:#0b4f1c}
main[data-status="exception"] .status{background:#fde8c8;color:#5c3300}
main[data-status="expired"] .status{background:#eee;color:#333}
`;

export const CHECKOUT_JS = `'use strict';
(function () {
  var TEXT = ${JSON.stringify(STATUS_TEXT)};
  var main = document.querySelector('main[data-checkout]');
  if (!main || typeof EventSource === 'undefined') return;
  var line = document.getElementById('status');
  var source = new EventSource(encodeURIComponent(main.getAttribute('data-checkout')) + '/events');
  source.addEventListener('status', function (ev) {
    var s = String(ev.data);
    if (!Object.prototype.hasOwnProperty.call(TEXT, s)) return;
    main.setAttribute('data-status', s);
    line.textContent = TEXT[s];
  });
})();
`;
