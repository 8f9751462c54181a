// The console's routes through app.inject on the real API app and PostgreSQL: no session → the login page; a login
// sets an HttpOnly SameSite=Strict cookie; every page carries the strict CSP; a form without the session's CSRF
// token or from another origin is 403 and changes nothing; refund and resolve go through the exception path once
// (a double submit and two sessions store one refund payout); an expired or idle session is gone; logout ends it;
// a dead letter is replayed once; an attacker's invoice id is shown as text; login throttling locks an operator.
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { buildApiApp } from '../../../app/api/build-api-app';
import { addConsoleOperator } from '../../../app/console/operators';
import { sessionIdHash } from '../../../app/console/store';
import { CONTENT_SECURITY_POLICY } from '../../../app/console/security-headers';
import { listExceptions } from '../../../app/exception/store';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { insertMerchant } from '../../../app/merchant/store';
import { address } from '../../../app/types';
import { createLedger } from '../../../indexer/ledger';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { addr, receipt, sig } from '../../indexer/ledger/fixtures';

const PASSWORD = 'a long operator password';
const HOST = 'console.test:8080';
const ORIGIN = `http://${HOST}`;

interface Session {
  cookie: string;
  csrf: string;
}

describe('app/console routes (app.inject, real PostgreSQL)', () => {
  let db: TestDb;
  let app: FastifyInstance;
  const mint = addr('console-mint');
  let vault: string;

  const snapshot = async () =>
    JSON.stringify(
      await Promise.all(
        ['exception_resolutions', 'payouts', 'outbox'].map(
          async (t) => (await db.pool.query(`SELECT * FROM ${t} ORDER BY 1`)).rows,
        ),
      ),
    );

  async function login(name = 'alice', password = PASSWORD) {
    return app.inject({
      method: 'POST',
      url: '/console/login',
      headers: { host: HOST, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ name, password }).toString(),
    });
  }

  async function session(name = 'alice'): Promise<Session> {
    const res = await login(name);
    expect(res.statusCode, res.body).to.equal(303);
    const setCookie = String(res.headers['set-cookie']);
    const cookie = /oncepay_console=([^;]+)/.exec(setCookie)![1];
    const page = await get('/console/exceptions', { cookie, csrf: '' });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1];
    return {
      cookie: `oncepay_console=${cookie}`.replace('oncepay_console=oncepay_console=', 'oncepay_console='),
      csrf,
    };
  }

  function get(url: string, s?: Session | { cookie: string; csrf: string }) {
    const cookie = s ? (s.cookie.startsWith('oncepay_console=') ? s.cookie : `oncepay_console=${s.cookie}`) : undefined;
    return app.inject({ method: 'GET', url, headers: { host: HOST, ...(cookie ? { cookie } : {}) } });
  }

  function post(url: string, s: Session, form: Record<string, string>, origin: string | null = ORIGIN) {
    return app.inject({
      method: 'POST',
      url,
      headers: {
        host: HOST,
        cookie: s.cookie,
        'content-type': 'application/x-www-form-urlencoded',
        ...(origin ? { origin } : {}),
      },
      payload: new URLSearchParams(form).toString(),
    });
  }

  async function overpaidException(key: string): Promise<string> {
    const ledger = createLedger({ db: db.pool });
    await ledger.createInvoice({ id: key, mint, expectedAmount: 100n, depositAddress: vault });
    await ledger.applyBatch({
      cluster: 'localnet',
      source: 'scanner',
      receipts: [receipt({ signature: sig(key), destination: vault, mint, amount: 150n })],
    });
    return (await listExceptions(db.pool, { invoiceId: key }))[0].id;
  }

  before(async () => {
    db = await createTestDb('app_console_routes');
    const m = await insertMerchant(db.pool, {
      name: 'shop',
      apiKeyHash: hashApiKey('console-shop-key-0123456789'),
      programId: address(addr('program')),
      merchantAddress: address(addr('shop-merchant')),
      vault: address(addr('shop-vault')),
    });
    vault = m.vault;
    await addConsoleOperator(db.pool, 'alice', { password: PASSWORD });
    await addConsoleOperator(db.pool, 'bob', { password: PASSWORD });
    app = await buildApiApp({ db: db.pool, console: { explorer: { cluster: 'localnet' } } });
  });
  after(async () => {
    await app?.close();
    await db?.drop();
  });

  it('without a session every page and action redirects to the login page, whatever the path spelling', async () => {
    for (const url of [
      '/console/',
      '/console/invoices',
      '/console/exceptions',
      '/console/payouts',
      '/console/payouts/1',
      '/console/dead-letters',
      '/console/figures',
      '/console/invoices/',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).to.equal(303);
      expect(res.headers.location, url).to.equal('/console/login');
    }
    for (const url of [
      '/console//invoices',
      '/%63onsole/invoices',
      '/Console/invoices',
      '/console/../console/invoices',
    ]) {
      const res = await get(url);
      expect([303, 404], url).to.include(res.statusCode);
      expect(res.body, url).to.not.include('Signed in as');
    }
    const before = await snapshot();
    const forged = await post('/console/exceptions/1/refund', { cookie: 'oncepay_console=x', csrf: '' }, {});
    expect(forged.statusCode).to.equal(303);
    expect(await snapshot()).to.equal(before);
  });

  it('the login page is public and carries the strict headers; the API routes do not get them', async () => {
    const res = await get('/console/login');
    expect(res.statusCode).to.equal(200);
    expect(res.headers['content-security-policy']).to.equal(CONTENT_SECURITY_POLICY);
    expect(res.headers['x-content-type-options']).to.equal('nosniff');
    expect(res.headers['referrer-policy']).to.equal('same-origin');
    expect(res.body).to.include('<form method="post" action="/console/login">');
    expect((await get('/console/console.css')).headers['content-type']).to.match(/^text\/css/);
    expect((await get('/healthz')).headers['content-security-policy']).to.equal(undefined);
  });

  it('a wrong password or unknown name is 401 with the same words; the right one sets the session cookie', async () => {
    const wrong = await login('alice', 'not the password at all');
    const unknown = await login('nobody', PASSWORD);
    expect(wrong.statusCode).to.equal(401);
    expect(unknown.statusCode).to.equal(401);
    expect(wrong.body).to.equal(unknown.body.replace('value="nobody"', 'value="alice"'));
    const ok = await login();
    expect(ok.statusCode).to.equal(303);
    expect(ok.headers.location).to.equal('/console/invoices');
    const c = String(ok.headers['set-cookie']);
    expect(c).to.match(/HttpOnly/i);
    expect(c).to.match(/SameSite=Strict/i);
    expect(c).to.match(/Path=\/console\//);
    expect(c).to.not.match(/Secure/); // plain HTTP here; Secure behind TLS (unit-tested)
    const row = (await db.pool.query('SELECT id_hash FROM operator_sessions')).rows;
    expect(row.map((r) => r.id_hash.toString('base64url'))).to.not.include(/oncepay_console=([^;]+)/.exec(c)![1]);
  });

  it('a login from another origin is refused', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/console/login',
      headers: { host: HOST, origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ name: 'alice', password: PASSWORD }).toString(),
    });
    expect(res.statusCode).to.equal(403);
    expect(res.headers['set-cookie']).to.equal(undefined);
  });

  it('pages render for a session, with the CSP, and show attacker-chosen text as text', async () => {
    const ledger = createLedger({ db: db.pool });
    await ledger.createInvoice({
      id: '<img src=x onerror=alert(1)>',
      mint,
      expectedAmount: 5n,
      depositAddress: addr('xss-deposit'),
    });
    const s = await session();
    for (const url of [
      '/console/invoices',
      '/console/exceptions',
      '/console/payouts',
      '/console/dead-letters',
      '/console/figures',
    ]) {
      const res = await get(url, s);
      expect(res.statusCode, url).to.equal(200);
      expect(res.headers['content-security-policy'], url).to.equal(CONTENT_SECURITY_POLICY);
      expect(res.body, url).to.include('Signed in as <strong>alice</strong>');
    }
    const list = await get('/console/invoices', s);
    expect(list.body).to.not.include('<img src=x');
    expect(list.body).to.include('&lt;img src=x onerror=alert(1)&gt;');
    const detail = await get(`/console/invoices/${encodeURIComponent('<img src=x onerror=alert(1)>')}`, s);
    expect(detail.statusCode).to.equal(200);
    expect(detail.body).to.not.include('<img src=x');
    expect((await get('/console/exceptions?before=1%20OR%201', s)).statusCode).to.equal(400);
  });

  it("a refund without the CSRF token, with another session's token or from another origin is 403 and changes nothing", async () => {
    const id = await overpaidException('INV-csrf');
    const alice = await session('alice');
    const bob = await session('bob');
    const before = await snapshot();
    for (const [why, res] of [
      ['no token', await post(`/console/exceptions/${id}/refund`, alice, {})],
      ['wrong token', await post(`/console/exceptions/${id}/refund`, alice, { csrf: 'x'.repeat(43) })],
      ["bob's token", await post(`/console/exceptions/${id}/refund`, alice, { csrf: bob.csrf })],
      [
        'other origin',
        await post(`/console/exceptions/${id}/refund`, alice, { csrf: alice.csrf }, 'http://evil.example'),
      ],
      ['origin null', await post(`/console/exceptions/${id}/refund`, alice, { csrf: alice.csrf }, 'null')],
    ] as const) {
      expect(res.statusCode, why).to.equal(403);
      expect(res.body, why).to.include('ONCEPAY__CONSOLE__CSRF_REJECTED');
    }
    expect(await snapshot()).to.equal(before);
  });

  it('refund: a double submit and a second session store one refund payout, keyed by the receipt', async () => {
    const id = await overpaidException('INV-refund');
    const alice = await session('alice');
    const bob = await session('bob');
    const answers = await Promise.all([
      post(`/console/exceptions/${id}/refund`, alice, { csrf: alice.csrf }),
      post(`/console/exceptions/${id}/refund`, alice, { csrf: alice.csrf }),
      post(`/console/exceptions/${id}/refund`, bob, { csrf: bob.csrf }),
    ]);
    expect(answers.map((a) => a.statusCode)).to.deep.equal([303, 303, 303]);
    const outcomes = answers.map((a) => new URL(a.headers.location as string, ORIGIN).searchParams.get('outcome'));
    expect(outcomes.filter((x) => x === 'refund-stored')).to.have.length(1);
    expect(outcomes.filter((x) => x === 'refund-exists')).to.have.length(2);
    const payouts = (
      await db.pool.query(
        `SELECT merchant_payout_id, amount::text FROM payouts WHERE merchant_payout_id LIKE 'refund:%'`,
      )
    ).rows;
    expect(payouts).to.deep.equal([{ merchant_payout_id: `refund:localnet:${sig('INV-refund')}:0:-1`, amount: '50' }]);
    const page = await get(
      `/console/exceptions?${new URL(answers[0].headers.location as string, ORIGIN).searchParams}`,
      alice,
    );
    expect(page.body).to.match(/Exception \d+: refund stored as payout \d+|already has refund payout/);
    expect(page.body).to.include('refunding');
  });

  it('resolve needs a note; a resolved exception cannot be refunded; a second resolve changes nothing', async () => {
    const id = await overpaidException('INV-resolve');
    const s = await session();
    const noNote = await post(`/console/exceptions/${id}/resolve`, s, { csrf: s.csrf, note: '  ' });
    expect(new URL(noNote.headers.location as string, ORIGIN).searchParams.get('code')).to.equal(
      'ONCEPAY__EXCEPTION__NOTE_MISSING',
    );
    const ok = await post(`/console/exceptions/${id}/resolve`, s, { csrf: s.csrf, note: 'customer <b>kept</b> it' });
    expect(new URL(ok.headers.location as string, ORIGIN).searchParams.get('outcome')).to.equal('resolved');
    const again = await post(`/console/exceptions/${id}/resolve`, s, { csrf: s.csrf, note: 'again' });
    expect(new URL(again.headers.location as string, ORIGIN).searchParams.get('outcome')).to.equal('already-resolved');
    const refund = await post(`/console/exceptions/${id}/refund`, s, { csrf: s.csrf });
    expect(new URL(refund.headers.location as string, ORIGIN).searchParams.get('code')).to.equal(
      'ONCEPAY__EXCEPTION__ALREADY_RESOLVED',
    );
    const note = (await db.pool.query('SELECT note FROM exception_resolutions WHERE exception_id = $1', [id])).rows[0];
    expect(note.note).to.equal('customer <b>kept</b> it (console: alice)');
    const page = await get('/console/exceptions', s);
    expect(page.body).to.include('customer &lt;b&gt;kept&lt;/b&gt; it');
  });

  it('a dead letter is replayed once: back to pending with its fulfilment id; a second replay changes nothing', async () => {
    const ledger = createLedger({ db: db.pool });
    await ledger.createInvoice({ id: 'INV-dead', mint, expectedAmount: 10n, depositAddress: addr('dead-deposit') });
    await ledger.applyBatch({
      cluster: 'localnet',
      source: 'scanner',
      receipts: [receipt({ signature: sig('INV-dead'), destination: addr('dead-deposit'), mint, amount: 10n })],
    });
    // The outbox worker's dead-letter state, as it leaves a row after its last failed attempt.
    const { id } = (
      await db.pool.query(
        `UPDATE outbox SET state = 'dead', attempts = 10, last_error = 'HTTP 500' FROM fulfilments f
          WHERE f.id = outbox.fulfilment_id AND f.invoice_id = 'INV-dead' RETURNING outbox.id`,
      )
    ).rows[0];
    const s = await session();
    expect((await get('/console/dead-letters', s)).body).to.include(`Replay ${id}`);
    const first = await post(`/console/dead-letters/${id}/replay`, s, { csrf: s.csrf });
    expect(new URL(first.headers.location as string, ORIGIN).searchParams.get('outcome')).to.equal('replayed');
    const second = await post(`/console/dead-letters/${id}/replay`, s, { csrf: s.csrf });
    expect(new URL(second.headers.location as string, ORIGIN).searchParams.get('outcome')).to.equal('not-dead');
    const row = (await db.pool.query('SELECT state, attempts FROM outbox WHERE id = $1', [id])).rows[0];
    expect(row).to.deep.equal({ state: 'pending', attempts: 0 });
  });

  it('an expired or idle session is deleted and sends back to the login page; logout ends a session', async () => {
    const expired = await session();
    await db.pool.query(`UPDATE operator_sessions SET expires_at = now() - interval '1 second'`);
    const res = await get('/console/invoices', expired);
    expect(res.statusCode).to.equal(303);
    expect(res.headers.location).to.equal('/console/login?ended=expired');
    const cookieId = /oncepay_console=(.*)$/.exec(expired.cookie)![1];
    const left = await db.pool.query('SELECT 1 FROM operator_sessions WHERE id_hash = $1', [sessionIdHash(cookieId)]);
    expect(left.rowCount).to.equal(0);

    const idle = await session();
    await db.pool.query(`UPDATE operator_sessions SET last_seen_at = now() - interval '31 minutes'`);
    expect((await get('/console/invoices', idle)).headers.location).to.equal('/console/login?ended=idle');

    const s = await session();
    const before = await snapshot();
    const out = await post('/console/logout', s, { csrf: s.csrf });
    expect(out.headers.location).to.equal('/console/login?ended=out');
    expect((await get('/console/invoices', s)).statusCode).to.equal(303);
    expect(await snapshot()).to.equal(before);
  });

  it('five wrong passwords lock the operator (429, even with the right one); strangers grow no rows', async () => {
    await addConsoleOperator(db.pool, 'carol', { password: PASSWORD });
    for (let i = 0; i < 5; i++) expect((await login('carol', `wrong password ${i}`)).statusCode).to.equal(401);
    const locked = await login('carol', PASSWORD);
    expect(locked.statusCode).to.equal(429);
    expect(Number(locked.headers['retry-after'])).to.be.greaterThan(0);
    const operators = (await db.pool.query('SELECT count(*)::int AS n FROM operators')).rows[0].n;
    for (let i = 0; i < 3; i++) await login(`stranger${i}`, 'whatever password');
    expect((await db.pool.query('SELECT count(*)::int AS n FROM operators')).rows[0].n).to.equal(operators);
  });
});
