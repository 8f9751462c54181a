// `oncepay outbox run` through a real PostgreSQL restart and pg_terminate_backend of its sessions while invoices
// keep being paid: the process stays up, backs off, recovers by itself, and every fulfilment reaches the
// merchant under its own Idempotency-Key. Then SIGTERM with a delivery in flight: it claims nothing more, lets
// that delivery finish and records it, exits 0.
import * as http from 'http';
import { AddressInfo } from 'net';
import { expect } from 'chai';
import { createLedger, fulfilmentOpId, Ledger } from '../../indexer/ledger';
import { addr, receipt, sig } from '../indexer/ledger/fixtures';
import { startMerchantServer } from '../indexer/outbox/merchant-server';
import { FaultDb, freePort, getJson, startFaultDb, startOncepay, waitFor } from './support';
import { currentSuite, expectNoSecretShown, passwordOf } from './secrets';

const SECRET = 'whsec-outbox-fault';
const APP = 'oncepay-outbox-run';

/** Pay invoices (the test plays the scanner), retrying its own write while the database is away. */
async function pay(ledger: Ledger, ids: string[]): Promise<void> {
  await waitFor(
    async () => {
      for (const id of ids)
        await ledger.createInvoice({
          id,
          mint: addr('mint-usdc'),
          expectedAmount: 50n,
          depositAddress: addr(`dep-${id}`),
        });
      await ledger.applyBatch({
        cluster: 'localnet',
        source: 'scanner',
        receipts: ids.map((id) =>
          receipt({ signature: sig(`pay-${id}`), destination: addr(`dep-${id}`), amount: 50n }),
        ),
      });
      return true;
    },
    `paying ${ids.join(',')}`,
  );
}

describe('faults: outbox worker through database restarts and terminated sessions', function () {
  // Real processes and a real server restart on a shared machine: no speed is asserted, so allow for a slow one.
  this.timeout(600_000);
  let db: FaultDb;
  let ledger: Ledger;

  before(async () => {
    db = await startFaultDb('outbox');
    ledger = createLedger({ db: db.pool });
  });
  after(async () => db?.close());
  /** The HMAC secret in the environment, never on the command line (`ps`): the suite's last case checks it. */
  const secretEnv = () => ({ ...db.env, ONCEPAY_WEBHOOK_SECRET: SECRET });

  const args = (url: string, port: number) => [
    'outbox',
    'run',
    '--url',
    url,
    '--poll-ms',
    '50',
    '--lease-seconds',
    '5',
    '--backoff-base-ms',
    '50',
    '--timeout-ms',
    '5000',
    '--metrics-port',
    String(port),
  ];

  it('stays up through a restart and a pg_terminate_backend while invoices are paid; every fulfilment delivered under its own key', async () => {
    const merchant = await startMerchantServer();
    const port = await freePort();
    const worker = startOncepay(args(merchant.url, port), secretEnv());
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor(async () => (await getJson(`${base}/readyz`)).status === 200, 'the worker to be ready');
      const ids: string[] = [];
      for (let b = 0; b < 8; b++) {
        const batch = Array.from({ length: 5 }, (_, k) => `F-${b}-${k}`);
        ids.push(...batch);
        await pay(ledger, batch);
        if (b === 2) {
          await db.restart(async () => {
            const ready = await getJson(`${base}/readyz`);
            expect([ready.status, ready.body.code]).to.deep.equal([503, 'DATABASE_UNAVAILABLE']);
            expect((await getJson(`${base}/healthz`)).status).to.equal(200);
            expect((await fetch(`${base}/metrics`)).status, '/metrics still answers').to.equal(200);
            await new Promise((r) => setTimeout(r, 300)); // a few failed rounds while it is down
          });
        }
        if (b === 5) await waitFor(async () => (await db.terminate(APP)) > 0, 'a session to terminate');
        await new Promise((r) => setTimeout(r, 100));
      }
      await waitFor(async () => {
        const { rows } = await db.pool.query(
          `SELECT count(*) FILTER (WHERE state = 'delivered')::int AS d, count(*)::int AS n FROM outbox`,
        );
        return rows[0].n === ids.length && rows[0].d === ids.length;
      }, 'every outbox row delivered');
      expect(worker.alive(), worker.stderr()).to.equal(true);
      expect(worker.stderr(), 'the worker saw the faults').to.match(/outbox round failed|database connection lost/);

      // Exactly the fulfilments, each under its own key with its own body; a repeat (a lease that expired while
      // the database was away) carries the same key, so the merchant applies it once.
      const keys = new Set(merchant.seen.map((s) => s.idempotencyKey));
      expect([...keys].sort()).to.deep.equal(ids.map(fulfilmentOpId).sort());
      for (const s of merchant.seen) expect(JSON.parse(s.body).fulfilmentId).to.equal(s.idempotencyKey);
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM fulfilments`);
      expect(rows[0].n).to.equal(ids.length);
    } finally {
      worker.child.kill('SIGKILL');
      await worker.done;
      await merchant.close();
    }
  });

  it('SIGTERM with a delivery in flight: claims nothing more, the delivery finishes and is recorded, exit 0', async () => {
    // A merchant that holds its answers until the test lets them go.
    const held: http.ServerResponse[] = [];
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(String(req.headers['idempotency-key']));
      req.resume();
      req.on('end', () => held.push(res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const worker = startOncepay(args(url, await freePort()), secretEnv());
    try {
      await pay(ledger, ['T-1']);
      await waitFor(() => held.length === 1, 'the delivery to be in flight');
      worker.child.kill('SIGTERM');
      await pay(ledger, ['T-2']); // paid after the stop: must not be claimed by the stopping worker
      await new Promise((r) => setTimeout(r, 300));
      for (const res of held) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      const exit = await worker.done;
      expect(exit.code, exit.stderr).to.equal(0);
      expect(seen).to.deep.equal([fulfilmentOpId('T-1')]);
      const { rows } = await db.pool.query(
        `SELECT f.invoice_id AS id, o.state FROM outbox o JOIN fulfilments f ON f.id = o.fulfilment_id WHERE f.invoice_id IN ('T-1', 'T-2') ORDER BY 1`,
      );
      expect(rows).to.deep.equal([
        { id: 'T-1', state: 'delivered' },
        { id: 'T-2', state: 'pending' },
      ]);
    } finally {
      if (worker.alive()) worker.child.kill('SIGKILL');
      server.closeAllConnections();
      server.close();
    }
  });

  it('no process of this suite showed a secret it was configured with: not the HMAC secret or the database password, in its output or its command line', () => {
    expectNoSecretShown(currentSuite(), [SECRET, passwordOf(db.url)]);
  });
});
