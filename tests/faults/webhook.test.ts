// `oncepay indexer webhook` through a real PostgreSQL restart and pg_terminate_backend of its sessions, under a
// bounded load of provider deliveries retried until acknowledged: the process stays up, answers 503 +
// Retry-After while the database is away, and afterwards every acknowledged delivery is credited exactly once.
// Then SIGTERM with a delivery in flight: it stops accepting, answers that delivery, exits 0. And the same faults
// in the default, verified mode (each signature asked of a JSON-RPC node before anything is credited).
import { expect } from 'chai';
import { createLedger } from '../../indexer/ledger';
import { blockAt, randomAddress, startReplayRpc, transferCheckedTx } from '../../testkit/replay-rpc';
import { FaultDb, getJson, Proc, startFaultDb, startOncepay, waitFor } from './support';
import { currentSuite, expectNoSecretShown, passwordOf, RPC_API_KEY, withApiKey } from './secrets';

const SECRET = 'whsec-fault-0123456789';
const APP = 'oncepay-indexer-webhook';
const CLUSTER = 'faults';

describe('faults: webhook receiver through database restarts and terminated sessions', function () {
  // Real processes and a real server restart on a shared machine: no speed is asserted, so allow for a slow one.
  this.timeout(600_000);
  let db: FaultDb;
  let hook: Proc;
  let url: string;
  const mint = randomAddress();
  const owners: string[] = [];

  before(async () => {
    db = await startFaultDb('webhook');
    // These deliveries are synthetic transactions on no chain, so this suite runs the receiver in its opt-out mode
    // (--trust-provider, and the deprecated bare secret): what it proves is about the database, not the chain.
    hook = startOncepay(
      ['indexer', 'webhook', '--port', '0', '--cluster', CLUSTER, '--trust-provider', '--legacy-signature'],
      // The secret in the environment, never on the command line (`ps`): the suite's last case checks it.
      { ...db.env, ONCEPAY_WEBHOOK_SECRET: SECRET },
    );
    const line = await hook.firstLine;
    expect(line.listening, JSON.stringify(line)).to.be.a('string');
    url = line.listening as string;
  });
  after(async () => {
    if (hook?.alive()) hook.child.kill('SIGKILL');
    await db?.close();
  });

  /** Delivery i: two transfers (i·10+1 and i·10+2 base units) to invoice i's deposit owner, event id evt-i. */
  function delivery(i: number): string {
    const owner = owners[i];
    const items = [1n, 2n].map((k) => ({
      slot: 1000 + i,
      blockTime: 1_780_000_000 + i,
      ...transferCheckedTx({ amount: BigInt(i) * 10n + k, mint, destinationOwner: owner }),
    }));
    return JSON.stringify({ id: `evt-${i}`, events: items });
  }
  async function deliver(body: string, at = url) {
    const post = () =>
      fetch(`${at}/v1/webhooks/helius`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-oncepay-secret': SECRET },
        body,
      });
    // A connection reset is not an answer: the delivery was not acknowledged, and a provider sends it again (an idle
    // keep-alive socket the receiver closed as the client reused it, on a loaded machine). Each case asserts the
    // receiver stayed up; any other network error (a refused connection: the process is gone) fails it.
    let r: Response;
    for (let resets = 0; ; resets++) {
      try {
        r = await post();
        break;
      } catch (e) {
        if (!isConnectionReset(e) || resets >= 5) throw e;
      }
    }
    return {
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: (await r.json()) as Record<string, unknown>,
    };
  }

  it('stays up through a restart and a pg_terminate_backend under load; 503 while away; exact totals', async () => {
    const N = 40;
    const ledger = createLedger({ db: db.pool });
    for (let i = 0; i < N; i++) {
      owners.push(randomAddress());
      await ledger.createInvoice({
        id: `inv-${i}`,
        mint,
        expectedAmount: BigInt(i) * 20n + 3n,
        depositAddress: owners[i],
      });
    }
    const bodies = Array.from({ length: N }, (_, i) => delivery(i));
    const outage: Array<{ status: number; code: unknown; retryAfter: string | null }> = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < N; i = next++) {
        if (i === 10) {
          await db.restart(async () => {
            for (let k = 0; k < 4; k++) {
              const a = await deliver(bodies[k]);
              outage.push({ status: a.status, code: a.body.code, retryAfter: a.retryAfter });
            }
            expect((await getJson(`${url}/readyz`)).status).to.equal(503);
            expect((await getJson(`${url}/healthz`)).status).to.equal(200);
          });
        }
        if (i === 25) expect(await db.terminate(APP)).to.be.greaterThan(0);
        // A provider retries until it gets a 2xx.
        for (;;) {
          const a = await deliver(bodies[i]);
          if (a.status === 200) {
            expect(a.body).to.include({ ok: true, eventId: `evt-${i}`, transactions: 2 });
            break;
          }
          expect([a.status, a.body.code, a.retryAfter !== null], JSON.stringify(a.body)).to.deep.equal([
            503,
            'DATABASE_UNAVAILABLE',
            true,
          ]);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);

    expect(hook.alive(), hook.stderr()).to.equal(true);
    expect(outage).to.deep.equal(Array(4).fill({ status: 503, code: 'DATABASE_UNAVAILABLE', retryAfter: '1' }));
    expect((await getJson(`${url}/readyz`)).status).to.equal(200);

    const q = async (sql: string) => (await db.pool.query(sql)).rows[0];
    expect(
      await q(`SELECT count(*)::int AS n, sum(amount)::text AS s FROM receipts WHERE cluster = '${CLUSTER}'`),
    ).to.deep.equal({
      n: 2 * N,
      s: String(Array.from({ length: N }, (_, i) => i * 20 + 3).reduce((a, b) => a + b, 0)),
    });
    const inv = await db.pool.query(`SELECT id, credited_amount::text AS c, expected_amount::text AS e FROM invoices`);
    for (const r of inv.rows) expect(r.c, r.id).to.equal(r.e);
    expect(await q(`SELECT count(*)::int AS n FROM exceptions`)).to.deep.equal({ n: 0 });
    expect(await q(`SELECT count(*)::int AS n FROM fulfilments`)).to.deep.equal({ n: N });
    expect(await q(`SELECT count(*)::int AS n FROM webhook_events`)).to.deep.equal({ n: N });
  });

  it('SIGTERM with a delivery in flight: stops accepting, answers that delivery 200, exits 0', async () => {
    const owner = randomAddress();
    owners.push(owner);
    await createLedger({ db: db.pool }).createInvoice({
      id: 'inv-term',
      mint,
      expectedAmount: 7n,
      depositAddress: owner,
    });
    const body = JSON.stringify({
      id: 'evt-term',
      events: [
        { slot: 5000, blockTime: 1_780_005_000, ...transferCheckedTx({ amount: 7n, mint, destinationOwner: owner }) },
      ],
    });
    const blocker = await db.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE receipts IN EXCLUSIVE MODE');
      const inFlight = deliver(body);
      await waitFor(async () => (await db.waiting(APP)) > 0, 'the delivery to wait on the lock');
      hook.child.kill('SIGTERM');
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
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(a.body).to.include({ ok: true, inserted: 1 });
    } finally {
      blocker.release(true); // closed: a failure before COMMIT must not leave the lock held
    }
    const exit = await hook.done;
    expect(exit.code, exit.stderr).to.equal(0);
    expect(
      (await db.pool.query(`SELECT credited_amount::text AS c FROM invoices WHERE id = 'inv-term'`)).rows[0].c,
    ).to.equal('7');
  });

  it('verified mode: through a restart and a pg_terminate_backend, every acknowledged delivery is credited once (by the chain)', async () => {
    const rpc = await startReplayRpc();
    const cluster = 'faults-verified';
    const vmint = randomAddress();
    const N = 20;
    const ledger = createLedger({ db: db.pool });
    const bodies: string[] = [];
    let total = 0n;
    for (let i = 0; i < N; i++) {
      const owner = randomAddress();
      const amounts = [BigInt(i) * 10n + 1n, BigInt(i) * 10n + 2n];
      total += amounts[0] + amounts[1];
      await ledger.createInvoice({
        id: `vinv-${i}`,
        mint: vmint,
        expectedAmount: amounts[0] + amounts[1],
        depositAddress: owner,
      });
      const txs = amounts.map((amount) => transferCheckedTx({ amount, mint: vmint, destinationOwner: owner }));
      const slot = 100 + i;
      rpc.setBlock(slot, blockAt(slot, txs));
      bodies.push(
        JSON.stringify({ id: `vevt-${i}`, events: txs.map((t) => ({ slot, blockTime: 1_780_000_000 + slot, ...t })) }),
      );
    }
    rpc.setTip({ finalized: 100 + N, confirmed: 105 + N });
    const verified = startOncepay(
      [
        'indexer',
        'webhook',
        '--port',
        '0',
        '--legacy-signature',
        '--cluster',
        cluster,
        '--rpc-timeout-ms',
        '2000',
        '--recheck-ms',
        '100',
      ],
      // The RPC URL carries a provider's API key: in the environment, as an operator should pass it.
      // At info level: "webhook receiver listening" names the endpoint, and is checked for the key.
      { ...db.env, ONCEPAY_WEBHOOK_SECRET: SECRET, ONCEPAY_RPC_URL: withApiKey(rpc.url), ONCEPAY_LOG_LEVEL: 'info' },
    );
    try {
      const at = (await verified.firstLine).listening as string;
      expect(at, verified.stderr()).to.be.a('string');
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < N; i = next++) {
          if (i === 6) {
            await db.restart(async () => {
              const a = await deliver(bodies[0], at);
              expect([a.status, a.body.code, a.retryAfter]).to.deep.equal([503, 'DATABASE_UNAVAILABLE', '1']);
            });
          }
          if (i === 13) await waitFor(async () => (await db.terminate(APP)) > 0, 'a session to terminate');
          for (;;) {
            const a = await deliver(bodies[i], at);
            // 200: verified and applied; 202: held durably, the background check finishes it.
            if (a.status === 200 || a.status === 202) break;
            expect([a.status, a.body.code, a.retryAfter !== null], JSON.stringify(a.body)).to.deep.equal([
              503,
              'DATABASE_UNAVAILABLE',
              true,
            ]);
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      };
      try {
        await Promise.all([worker(), worker()]);
      } catch (e) {
        // Say what the receiver did: alive (and its log), or how it ended.
        const end = verified.alive() ? { alive: true, stderr: verified.stderr() } : await verified.done;
        throw new Error(`${(e as Error).message}; the receiver: ${JSON.stringify(end).slice(-6000)}`, { cause: e });
      }
      await waitFor(
        async () =>
          (await db.pool.query(`SELECT count(*)::int AS n FROM receipts WHERE cluster = $1`, [cluster])).rows[0].n >=
          2 * N,
        'every verified receipt',
      );
      expect(verified.alive(), verified.stderr()).to.equal(true);
      const r = (
        await db.pool.query(`SELECT count(*)::int AS n, sum(amount)::text AS s FROM receipts WHERE cluster = $1`, [
          cluster,
        ])
      ).rows[0];
      expect(r).to.deep.equal({ n: 2 * N, s: String(total) });
      const inv = await db.pool.query(
        `SELECT id, credited_amount::text AS c, expected_amount::text AS e FROM invoices WHERE id LIKE 'vinv-%'`,
      );
      expect(inv.rows.length).to.equal(N);
      for (const row of inv.rows) expect(row.c, row.id).to.equal(row.e);
      expect((await db.pool.query(`SELECT count(*)::int AS n FROM exceptions`)).rows[0].n).to.equal(0);
      verified.child.kill('SIGTERM');
      const exit = await verified.done;
      expect(exit.code, exit.stderr).to.equal(0);
    } finally {
      if (verified.alive()) verified.child.kill('SIGKILL');
      await rpc.close();
    }
  });

  it('no process of this suite showed a secret it was configured with: not the webhook secret, the RPC API key or the database password, in its output or its command line', () => {
    expectNoSecretShown(currentSuite(), [SECRET, RPC_API_KEY, passwordOf(db.url)]);
  });
});

/** fetch's network failure when the socket was reset or closed under it (undici puts the cause on `cause`). */
function isConnectionReset(e: unknown): boolean {
  const code = (e as { cause?: { code?: string } })?.cause?.code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}
