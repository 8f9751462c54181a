// The console's pure units without I/O: escaping, CSRF token and origin checks, session expiry, login throttling,
// password hashing, explorer links, the security headers.
import { expect } from 'chai';
import { escapeHtml, html, safeHref } from '../../../app/console/html';
import { csrfTokenMatches, newCsrfToken, sameOrigin } from '../../../app/console/csrf';
import { sessionCookieOptions, sessionVerdict } from '../../../app/console/session-policy';
import { DEFAULT_THROTTLE, createTokenBucket, lockMsAfter } from '../../../app/console/login-throttle';
import { hashPassword, verifyPassword } from '../../../app/console/password';
import { explorerUrl } from '../../../app/console/explorer';
import { CONSOLE_HEADERS, CONTENT_SECURITY_POLICY } from '../../../app/console/security-headers';
import { operatorName } from '../../../app/console/operators';
import { numericCursor, pageOf } from '../../../app/console/paging';

describe('app/console units', () => {
  describe('html', () => {
    it('escapes every interpolated string, in text and in attributes', () => {
      const memo = `<script>alert(1)</script>" onmouseover="x'&`;
      const out = html`<p title="${memo}">${memo}</p>`.text;
      expect(out).to.not.include('<script>');
      expect(out).to.not.include('" onmouseover');
      expect(out).to.equal(
        '<p title="&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;x&#39;&amp;">&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;x&#39;&amp;</p>',
      );
      expect(escapeHtml(`&<>"'`)).to.equal('&amp;&lt;&gt;&quot;&#39;');
    });
    it('keeps nested html as markup, joins arrays, drops null/undefined/false, prints bigints', () => {
      const rows = ['a<', 'b'].map((x) => html`<li>${x}</li>`);
      // (an alias of the tag: prettier reflows templates tagged `html`, and this one checks exact output)
      const tag = html;
      expect(tag`<ul>${rows}</ul>${null}${undefined}${false}${12n}`.text).to.equal(
        '<ul><li>a&lt;</li><li>b</li></ul>12',
      );
    });
    it('safeHref lets http(s) and same-site paths through, nothing else', () => {
      expect(safeHref('https://explorer.solana.com/tx/x')).to.equal('https://explorer.solana.com/tx/x');
      expect(safeHref('/console/invoices')).to.equal('/console/invoices');
      for (const bad of ['javascript:alert(1)', 'data:text/html,x', '//evil.example/x', ' javascript:x'])
        expect(safeHref(bad)).to.equal('#');
    });
  });

  describe('csrf', () => {
    it('a token matches only itself, compared whole', () => {
      const t = newCsrfToken();
      expect(t).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(csrfTokenMatches(t, t)).to.equal(true);
      expect(csrfTokenMatches(t, t.slice(0, -1))).to.equal(false);
      expect(csrfTokenMatches(t, newCsrfToken())).to.equal(false);
      expect(csrfTokenMatches(t, undefined)).to.equal(false);
      expect(csrfTokenMatches(t, [t])).to.equal(false);
    });
    it('the Origin (or Referer) must be this host with this scheme; none at all is left to the token', () => {
      expect(sameOrigin({ origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080' }, false)).to.equal(true);
      expect(sameOrigin({ origin: 'https://pay.example', host: 'pay.example' }, true)).to.equal(true);
      expect(sameOrigin({ origin: 'http://pay.example', host: 'pay.example' }, true)).to.equal(false);
      expect(sameOrigin({ origin: 'http://evil.example', host: '127.0.0.1:8080' }, false)).to.equal(false);
      expect(sameOrigin({ origin: 'null', host: '127.0.0.1:8080' }, false)).to.equal(false);
      expect(sameOrigin({ referer: 'http://evil.example/x', host: '127.0.0.1:8080' }, false)).to.equal(false);
      expect(sameOrigin({ referer: 'http://127.0.0.1:8080/console/x', host: '127.0.0.1:8080' }, false)).to.equal(true);
      expect(sameOrigin({ host: '127.0.0.1:8080' }, false)).to.equal(true);
    });
  });

  describe('session policy', () => {
    const limits = { absoluteMs: 8 * 3600_000, idleMs: 30 * 60_000 };
    const t0 = new Date('2026-12-03T10:00:00Z');
    const at = (ms: number) => new Date(t0.getTime() + ms);
    const s = { createdAt: t0, lastSeenAt: t0, expiresAt: at(limits.absoluteMs) };
    it('live, then idle after the idle limit, then expired at the absolute limit whatever the activity', () => {
      expect(sessionVerdict(s, at(60_000), limits)).to.equal('live');
      expect(sessionVerdict(s, at(limits.idleMs), limits)).to.equal('idle');
      expect(
        sessionVerdict({ ...s, lastSeenAt: at(limits.absoluteMs - 1000) }, at(limits.absoluteMs), limits),
      ).to.equal('expired');
    });
    it('the cookie is HttpOnly, SameSite=Strict, scoped to /console/, Secure behind TLS', () => {
      expect(sessionCookieOptions(true, 3600_000)).to.deep.equal({
        httpOnly: true,
        sameSite: 'strict',
        secure: true,
        path: '/console/',
        maxAge: 3600,
      });
      expect(sessionCookieOptions(false, 1000).secure).to.equal(false);
    });
  });

  describe('login throttle', () => {
    it('free failures lock nothing; then the lock doubles up to its cap', () => {
      const l = DEFAULT_THROTTLE;
      expect(lockMsAfter(l.freeFailures - 1, l)).to.equal(0);
      expect(lockMsAfter(l.freeFailures, l)).to.equal(l.baseLockMs);
      expect(lockMsAfter(l.freeFailures + 1, l)).to.equal(2 * l.baseLockMs);
      expect(lockMsAfter(l.freeFailures + 1000, l)).to.equal(l.maxLockMs);
    });
    it('the process bucket gives `burst` at once and `perSecond` after, with two numbers of state', () => {
      const b = createTokenBucket({ perSecond: 2, burst: 3 });
      expect([b.take(0), b.take(0), b.take(0), b.take(0)]).to.deep.equal([true, true, true, false]);
      expect(b.take(499)).to.equal(false);
      // One second after the bucket emptied: two tokens back (perSecond), not more.
      expect([b.take(1000), b.take(1000), b.take(1000)]).to.deep.equal([true, true, false]);
    });
  });

  describe('password', () => {
    it('a scrypt hash with its own salt and parameters verifies the password and nothing else', async () => {
      const params = { N: 1 << 10, r: 8, p: 1 };
      const h1 = await hashPassword('correct horse battery', params);
      const h2 = await hashPassword('correct horse battery', params);
      expect(h1).to.match(/^scrypt\$1024\$8\$1\$/);
      expect(h1).to.not.equal(h2);
      expect(await verifyPassword('correct horse battery', h1)).to.equal(true);
      expect(await verifyPassword('correct horse batterY', h1)).to.equal(false);
      expect(await verifyPassword('correct horse battery', 'plain')).to.equal(false);
    });
    it('operator names are checked', () => {
      expect(operatorName('alice.ops')).to.equal('alice.ops');
      for (const bad of ['', 'Alice', '-x', 'a b', 'a'.repeat(65)])
        expect(() => operatorName(bad)).to.throw(/ONCEPAY__CONSOLE__OPERATOR_NAME_INVALID/);
    });
  });

  describe('explorer links', () => {
    const sig = '5'.repeat(88);
    it('per cluster: mainnet bare, devnet/testnet named, others custom with their RPC, or a template', () => {
      expect(explorerUrl('tx', sig, { cluster: 'mainnet-beta' })).to.equal(`https://explorer.solana.com/tx/${sig}`);
      expect(explorerUrl('tx', sig, { cluster: 'devnet' })).to.equal(
        `https://explorer.solana.com/tx/${sig}?cluster=devnet`,
      );
      expect(explorerUrl('address', 'Abc', { cluster: 'localnet', rpcUrl: 'http://127.0.0.1:8899' })).to.equal(
        'https://explorer.solana.com/address/Abc?cluster=custom&customUrl=http%3A%2F%2F127.0.0.1%3A8899',
      );
      expect(explorerUrl('tx', 'a/b', { cluster: 'x', template: 'http://h/{kind}/{id}' })).to.equal(
        'http://h/tx/a%2Fb',
      );
    });
  });

  it('the CSP is strict: nothing by default, styles and forms from self, no framing, no base', () => {
    expect(CONTENT_SECURITY_POLICY).to.equal(
      "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(CONSOLE_HEADERS['x-content-type-options']).to.equal('nosniff');
    expect(CONSOLE_HEADERS['referrer-policy']).to.equal('same-origin');
  });

  it('paging: a cursor is a row id or nothing; one extra row says a next page exists', () => {
    expect(numericCursor({})).to.equal(null);
    expect(numericCursor({ before: '42' })).to.equal('42');
    expect(() => numericCursor({ before: '1 OR 1=1' })).to.throw(/ONCEPAY__CONSOLE__CURSOR_INVALID/);
    expect(pageOf([5, 4, 3], 2, String)).to.deep.equal({ rows: [5, 4], next: '4' });
    expect(pageOf([5, 4], 2, String)).to.deep.equal({ rows: [5, 4], next: null });
  });
});
