// `oncepay payout serve` (the merchant API) through a real PostgreSQL restart and pg_terminate_backend of its
// sessions, under a bounded load of payout requests: the process stays up, answers 503 + Retry-After while the
// database is away (never a wrong 2xx, never a 500), recovers by itself, and every payout exists exactly once.
// Then SIGTERM with a request in flight: it stops accepting, answers that request, exits 0.
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { hashApiKey } from '../../app/api/api-key-auth';
import { insertMerchant } from '../../app/merchant/store';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { address } from '../../app/types';
import { currentSuite, expectNoSecretShown, passwordOf } from './secrets';
import { FaultDb, getJson, Proc, startFaultDb, startOncepay, waitFor } from './support';

const API_KEY = 'fault-test-api-key-0000000001';
const APP = 'oncepay-payout-serve';
const PUBLIC_URL = 'https://pay.example/';
const pk = () => address(Keypair.generate().publicKey);

describe('faults: merchant API (payout serve) through database restarts and terminated sessions', function () {
  // Real processes and a real server restart on a shared machine: no speed is asserted, so allow for a slow one.
  this.timeout(600_000);
  let db: FaultDb;
  let api: Proc;
  let url: string;
  const recipient = pk();
  const mint = pk();

  before(async () => {
    db = await startFaultDb('api');
    await insertMerchant(db.pool, {
      name: 'F',
      apiKeyHash: hashApiKey(API_KEY),
      programId: address(ONCEPAY_PROGRAM_ID),
      merchantAddress: pk(),
      vault: pk(),
    });
    api = startOncepay(['payout', 'serve', '--port', '0', '--public-url', PUBLIC_URL], db.env);
    const line = await api.firstLine;
    expect(line.url, JSON.stringify(line)).to.be.a('string');
    url = line.url as string;
  });
  after(async () => {
    if (api?.alive()) api.child.kill('SIGKILL');
    await db?.close();
  });

  interface Answer {
    status: number;
    code?: string;
    retryAfter: string | null;
    body: Record<string, unknown>;
  }
  async function post(i: number): Promise<Answer> {
    const r = await fetch(`${url}/v1/payouts`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'content-type': 'application/json',
        'idempotency-key': `key-${i}`,
      },
      body: JSON.stringify({ payoutId: `po-${i}`, recipient, mint, amount: String(1000 + i) }),
    });
    const body = (await r.json()) as Record<string, unknown>;
    return { status: r.status, code: body.code as string | undefined, retryAfter: r.headers.get('retry-after'), body };
  }
  /** Every answer must be a correct 201, or a "come back later": 503 DATABASE_UNAVAILABLE + Retry-After, 409 in progress. */
  function checkAnswer(i: number, a: Answer): void {
    if (a.status === 201) {
      expect(a.body, `a 2xx must be this request's payout`).to.include({
        payoutId: `po-${i}`,
        amount: String(1000 + i),
        recipient,
        mint,
      });
      return;
    }
    if (a.status === 503) {
      expect(a.code).to.equal('DATABASE_UNAVAILABLE');
      expect(a.retryAfter).to.match(/^[0-9]+$/);
      return;
    }
    expect({ status: a.status, code: a.code }, JSON.stringify(a.body)).to.deep.equal({
      status: 409,
      code: 'IDEMPOTENCY_IN_PROGRESS',
    });
  }
  async function createUntilDone(i: number, seen: Answer[]): Promise<void> {
    for (;;) {
      const a = await post(i);
      seen.push(a);
      checkAnswer(i, a);
      if (a.status === 201) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("--public-url: an invoice's checkout link is absolute on it, the page still served here", async () => {
    const r = await fetch(`${url}/v1/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', 'idempotency-key': 'inv-1' },
      body: JSON.stringify({ invoiceId: 'INV-1', amount: '1000000', mint: 'SOL', recipient }),
    });
    const body = (await r.json()) as { checkoutUrl?: string };
    expect(r.status, JSON.stringify(body)).to.equal(201);
    expect(body.checkoutUrl).to.match(/^https:\/\/pay\.example\/pay\/[A-Za-z0-9_-]+$/);
    const page = await fetch(`${url}${new URL(body.checkoutUrl!).pathname}`);
    expect(page.status).to.equal(200);
  });

  it('stays up through a restart and a pg_terminate_backend under load; 503 while away; every payout once', async () => {
    const N = 48;
    const seen: Answer[] = [];
    let next = 0;
    const faults: Promise<void>[] = [];
    const outage: Answer[] = [];
    const worker = async () => {
      for (let i = next++; i < N; i = next++) {
        if (i === 12) {
          // A real restart while requests are in flight; what is asked while it is down must be 503.
          faults.push(
            db.restart(async () => {
              for (let k = 0; k < 6; k++) outage.push(await post(1000 + k));
              const ready = await getJson(`${url}/readyz`);
              expect(ready.status).to.equal(503);
              expect(ready.body.code).to.equal('DATABASE_UNAVAILABLE');
              expect((await getJson(`${url}/healthz`)).status).to.equal(200);
            }),
          );
          await faults[faults.length - 1];
        }
        if (i === 30) expect(await db.terminate(APP)).to.be.greaterThan(0);
        await createUntilDone(i, seen);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    await Promise.all(faults);

    expect(api.alive(), api.stderr()).to.equal(true);
    expect(outage.map((a) => [a.status, a.code, a.retryAfter !== null])).to.deep.equal(
      Array(6).fill([503, 'DATABASE_UNAVAILABLE', true]),
    );
    expect(
      seen.filter((a) => a.status === 500),
      'never a 500 for an outage',
    ).to.deep.equal([]);
    expect((await getJson(`${url}/readyz`)).status).to.equal(200);

    const { rows } = await db.pool.query(`SELECT merchant_payout_id, amount::text AS amount FROM payouts ORDER BY id`);
    expect(rows.map((r) => r.merchant_payout_id).sort()).to.deep.equal(
      Array.from({ length: N }, (_, i) => `po-${i}`).sort(),
    );
    for (const r of rows) expect(r.amount).to.equal(String(1000 + Number(r.merchant_payout_id.slice(3))));
    const keys = await db.pool.query(
      // The payouts' keys (the first test's invoice has its own).
      `SELECT key, state, response_status, response_body->>'payoutId' AS p FROM idempotency_keys WHERE key LIKE 'key-%'`,
    );
    expect(keys.rows.length).to.equal(N);
    for (const k of keys.rows)
      expect([k.state, k.response_status, k.p]).to.deep.equal(['complete', 201, `po-${k.key.slice(4)}`]);
    // A replay of any key answers the stored 201, not a second payout.
    const replay = await post(7);
    expect(replay.status).to.equal(201);
    expect(replay.body.payoutId).to.equal('po-7');
  });

  it('SIGTERM with a request in flight: stops accepting, answers that request 201, exits 0', async () => {
    const blocker = await db.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE payouts IN EXCLUSIVE MODE');
      const inFlight = post(500);
      await waitFor(async () => (await db.waiting(APP)) > 0, 'the request to wait on the lock');
      api.child.kill('SIGTERM');
      // No new connection is accepted while the in-flight request is still running.
      await waitFor(
        () =>
          fetch(`${url}/healthz`).then(
            () => false,
            () => true,
          ),
        'the listener to close',
      );
      await blocker.query('COMMIT');
      const a = await inFlight;
      expect(a.status, JSON.stringify(a.body)).to.equal(201);
      expect(a.body.payoutId).to.equal('po-500');
    } finally {
      blocker.release(true); // closed: a failure before COMMIT must not leave the lock held
    }
    const exit = await api.done;
    expect(exit.code, exit.stderr).to.equal(0);
    expect(
      (await db.pool.query(`SELECT count(*)::int AS n FROM payouts WHERE merchant_payout_id = 'po-500'`)).rows[0].n,
    ).to.equal(1);
  });

  it('no process of this suite showed a secret it was configured with: not the database password or an API key, in its output or its command line', () => {
    expectNoSecretShown(currentSuite(), [passwordOf(db.url), API_KEY]);
  });
});
