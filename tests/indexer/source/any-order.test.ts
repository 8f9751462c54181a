// Every delivery path at once, in any order, on one localnet and one PostgreSQL server of the file's own: the
// Yellowstone stream (`oncepay indexer stream --grpc`, a real process: its stream dropped mid-block, then SIGKILLed
// and started again), the websocket source (`oncepay indexer stream --ws`, a real process), the webhook receiver
// (chain-verified hints), the backfill and the scanner deliver the same real transfers, some first by one, some by
// another → exact totals, one receipt per transfer, and the per-source delivery counters add up. Then the database
// restarts under the two running subscription processes: neither crashes, both recover, the totals stay exact.
// One localnet, one database and the same processes for both cases (each process start costs seconds).
import { expect } from 'chai';
import type { FastifyInstance } from 'fastify';
import { startLocalnet, LocalnetHandle } from '../../../localnet';
import { decodeBlock } from '../../../indexer/decode';
import { createRpcClient } from '../../../indexer/rpc';
import { runBackfill } from '../../../indexer/source/backfill';
import { createScanner } from '../../../indexer/source/scanner';
import { buildWebhookApp } from '../../../indexer/source/webhook';
import { signDelivery } from '../../../indexer/source/webhook-auth';
import { createChainVerifier } from '../../../indexer/source/webhook-verifier';
import { confirm } from '../../../testkit/cluster';
import { FaultDb, freePort, getJson, Proc, startFaultDb, startOncepay, waitFor } from '../../faults/support';
import { credited, Merchant, merchantWithInvoice, sum, transfers } from './transfer-fixture';

const CLUSTER = 'any-order';
const SECRET = 'whsec-any-order';

describe('indexer/source any order: stream + ws + webhook + backfill + scanner, a SIGKILL and a database restart', function () {
  this.timeout(600_000);
  let net: LocalnetHandle;
  let db: FaultDb;
  let m: Merchant;
  let app: FastifyInstance;
  const procs: Proc[] = [];
  let stream: Proc;
  let ws: Proc;
  const ports = { stream: 0, ws: 0 };
  const metricsUrl = (port: number) => `http://127.0.0.1:${port}`;
  const bursts = { a: [1_000_001n, 2_000_002n, 3n], b: [400_000n, 500_000n, 600_000n, 7n], c: [11n, 22n, 33n] };
  const d = [5_000_000n, 9n];
  const all = [...bursts.a, ...bursts.b, ...bursts.c, ...d];
  const sigs: string[] = [];
  /** What each in-process source reported: deliveries (inserted + duplicates) and inserted. */
  const reported = { webhook: { n: 0, inserted: 0 }, backfill: { n: 0, inserted: 0 }, scanner: { n: 0, inserted: 0 } };

  const rpc = () => createRpcClient({ url: net.url, retry: { attempts: 3, timeoutMs: 10_000 } });
  const decode = (block: unknown, slot: number) => decodeBlock(block, { slot, cluster: CLUSTER });
  const checkpoint = async (source: string): Promise<number> =>
    Number(
      (await db.pool.query(`SELECT slot::text FROM checkpoints WHERE cluster = $1 AND source = $2`, [CLUSTER, source]))
        .rows[0]?.slot ?? -1,
    );
  const finalized = async (signatures: string[]): Promise<number> => {
    const last = Math.max(...(await Promise.all(signatures.map((s) => confirm(m.connection, s)))));
    await waitFor(async () => (await m.connection.getSlot('finalized')) >= last, 'finality');
    return last;
  };
  /** A signed webhook delivery naming `signatures` (a bare signature list, as Helius raw webhooks send). */
  async function deliver(signatures: string[]): Promise<void> {
    const body = JSON.stringify(signatures);
    const t = Math.floor(Date.now() / 1000);
    const r = await app.inject({
      method: 'POST',
      url: '/v1/webhooks/helius',
      headers: { 'content-type': 'application/json', 'x-oncepay-signature': signDelivery(SECRET, body, t) },
      payload: body,
    });
    expect(r.statusCode, r.body).to.equal(200);
    const j = r.json() as { inserted: number; duplicates: number; credited: number };
    expect(j.credited).to.equal(signatures.length);
    reported.webhook.n += j.inserted + j.duplicates;
    reported.webhook.inserted += j.inserted;
  }
  async function backfill(fromSlot: number, toSlot: number): Promise<void> {
    const r = await runBackfill(
      { rpc: rpc(), ledger: m.ledger, decode },
      { cluster: CLUSTER, fromSlot, toSlot, commitment: 'finalized', listSpan: 500_000, chunkSize: 50, concurrency: 4 },
    );
    expect(r.failed).to.equal(0);
    reported.backfill.n += r.inserted + r.duplicates;
    reported.backfill.inserted += r.inserted;
  }
  /** `oncepay indexer stream --grpc | --ws` against this file's localnet, from the invoice's first slot. */
  const subscription = (flag: '--grpc' | '--ws', metricsPort: number, extra: string[] = []): string[] => [
    ...['indexer', 'stream', flag, flag === '--grpc' ? net.grpcUrl! : net.wsUrl, '--cluster', CLUSTER],
    ...['--from-slot', String(m.startSlot), '--ping-ms', '500', '--refresh-ms', '500'],
    ...['--metrics-port', String(metricsPort), ...extra],
  ];
  const streamArgs = () => subscription('--grpc', ports.stream, ['--commitment', 'confirmed']);
  const start = (args: string[]): Proc => {
    const p = startOncepay(args, db.env);
    procs.push(p);
    return p;
  };
  /** Wait for `pred`, failing early with the process's stderr if it exited. */
  async function waitWith(p: Proc[], pred: () => Promise<boolean>, what: string): Promise<void> {
    await waitFor(async () => {
      const dead = p.find((x) => !x.alive());
      if (dead) throw new Error(`process exited while waiting for ${what}: ${dead.stderr().slice(-3000)}`);
      return pred();
    }, what).catch((e) => {
      throw new Error(`${(e as Error).message}\n${p.map((x) => x.stderr().slice(-2000)).join('\n----\n')}`);
    });
  }

  before(async () => {
    // Slow slots: the process starts take tens of seconds on a loaded machine, and the scanner, the backfill and the
    // restarted stream's replay read every slot of that time.
    net = await startLocalnet({
      slotMs: 100,
      finalityDepth: 2,
      wsOnNextPort: false,
      geyser: { replaySlots: 1_000_000 },
    });
    db = await startFaultDb('anyorder');
    m = await merchantWithInvoice(net, db, 'inv-any', sum(all));
    const verifier = createChainVerifier({
      db: db.pool,
      rpc: rpc(),
      ledger: m.ledger,
      cluster: CLUSTER,
      recheck: { baseMs: 20, capMs: 200 },
    });
    // The chain check runs inline (200 and its counts) within a generous deadline: what this file counts is which
    // source applies a transfer first; the 202 of a check past its deadline is the webhook suites' case.
    const inlineCheckMs = 30_000;
    app = buildWebhookApp({ db: db.pool, ledger: m.ledger, cluster: CLUSTER, secret: SECRET, verifier, inlineCheckMs });
    await app.ready();
  });
  after(async () => {
    for (const p of procs) if (p.alive()) p.child.kill('SIGKILL');
    await app?.close();
    await net?.stop();
    await db?.close();
  });

  it('each transfer credited once whichever source delivers it first; the counters add up', async () => {
    // A: before any subscription runs. The webhook credits two, the backfill the third (and re-reads the two).
    sigs.push(...(await transfers(m, bursts.a)));
    const lastA = await finalized(sigs);
    await deliver(sigs.slice(0, 2));
    await backfill(m.startSlot, lastA);

    // B: both subscription processes start (each replays A: duplicates), the gRPC stream is dropped mid-block.
    ports.stream = await freePort();
    ports.ws = await freePort();
    stream = start(streamArgs());
    ws = start(subscription('--ws', ports.ws));
    await waitWith(
      [stream, ws],
      async () => (await checkpoint('stream')) >= lastA && (await checkpoint('ws')) >= lastA,
      'both subscriptions past burst A',
    );
    net.faults.dropGeyserStreams({ afterTransactions: 1 });
    const b = await transfers(m, bursts.b);
    sigs.push(...b);
    await finalized(b);
    await waitWith(
      [stream, ws],
      async () => (await credited(db, 'inv-any')) === sum([...bursts.a, ...bursts.b]),
      'burst B credited',
    );
    await deliver(b); // late: every one a duplicate by now

    // C: the stream process is SIGKILLed and started again at once: burst C lands while it boots (seconds), so it
    // resumes from its checkpoint; meanwhile the backfill and the webhook meet the ws source on the same transfers.
    stream.child.kill('SIGKILL');
    expect((await stream.done).signal).to.equal('SIGKILL');
    stream = start(streamArgs());
    const c = await transfers(m, bursts.c);
    sigs.push(...c);
    const lastC = await finalized(c);
    await backfill(lastA + 1, lastC);
    await deliver([c[0]]);
    await waitWith(
      [stream, ws],
      async () => (await checkpoint('stream')) >= lastC && (await checkpoint('ws')) >= lastC,
      'the restarted stream past burst C',
    );

    // The scanner, the source of truth, last: everything is there already.
    const pass = await createScanner(
      { rpc: rpc(), ledger: m.ledger, decode },
      {
        cluster: CLUSTER,
        commitment: 'finalized',
        rescanWindow: 0,
        fromSlot: m.startSlot,
        maxSlotsPerPass: 100_000,
        chunkSize: 50,
        concurrency: 4,
        pollMs: 20,
      },
    ).run({ once: true });
    reported.scanner = { n: pass!.inserted + pass!.duplicates, inserted: pass!.inserted };
    expect(pass!.inserted, 'the scanner found nothing new').to.equal(0);

    const expected = sum([...bursts.a, ...bursts.b, ...bursts.c]);
    expect(await credited(db, 'inv-any')).to.equal(expected);
    const receipts = await db.pool.query(
      `SELECT signature, first_source::text AS s FROM receipts WHERE cluster = $1 ORDER BY signature`,
      [CLUSTER],
    );
    expect(receipts.rows.map((r) => r.signature).sort(), 'one receipt per transfer').to.deep.equal([...sigs].sort());
    const first = new Map(receipts.rows.map((r) => [r.signature as string, r.s as string]));
    expect([first.get(sigs[0]), first.get(sigs[1]), first.get(sigs[2])]).to.deep.equal([
      'webhook',
      'webhook',
      'backfill',
    ]);
    for (const s of b) expect(['stream', 'ws']).to.include(first.get(s));

    // Per source: what it reports delivering is what the ledger counted, and the inserts add up to the receipts.
    const counts = await db.pool.query(
      `SELECT source::text, inserted::int, duplicates::int FROM receipt_delivery_counts WHERE cluster = $1`,
      [CLUSTER],
    );
    const by = new Map(counts.rows.map((r) => [r.source as string, r as { inserted: number; duplicates: number }]));
    for (const s of ['webhook', 'backfill', 'scanner'] as const) {
      expect(by.get(s)!.inserted, `${s} inserted`).to.equal(reported[s].inserted);
      expect(by.get(s)!.inserted + by.get(s)!.duplicates, `${s} deliveries`).to.equal(reported[s].n);
    }
    // Each subscription source saw every transfer at least once (the stream some twice: the drop and the restart).
    for (const s of ['stream', 'ws']) expect(by.get(s)!.inserted + by.get(s)!.duplicates).to.be.at.least(sigs.length);
    expect(
      counts.rows.reduce((n, r) => n + r.inserted, 0),
      'inserted over all sources',
    ).to.equal(sigs.length);
  });

  it('the two subscription processes survive a PostgreSQL restart: no crash, recovered, exact totals', async () => {
    expect(stream?.alive() && ws?.alive(), 'both processes from the first case still run').to.equal(true);
    let down!: string;
    await db.restart(async () => {
      // While the database is down: transfers land and become final, and both sources fail to write them.
      down = (await getJson(`${metricsUrl(ports.ws)}/readyz`)).status.toString();
      const dd = await transfers(m, d);
      sigs.push(...dd);
      await finalized(dd);
      await new Promise((r) => setTimeout(r, 1_500));
    });
    expect(down, '/readyz while the database is down').to.equal('503');
    await waitWith(
      [stream, ws],
      async () => (await credited(db, 'inv-any')) === sum(all),
      'the transfers made during the outage credited',
    );
    for (const url of [ports.stream, ports.ws].map(metricsUrl))
      await waitFor(async () => (await getJson(`${url}/readyz`)).status === 200, `${url}/readyz after the restart`);
    const receipts = await db.pool.query(`SELECT signature FROM receipts WHERE cluster = $1`, [CLUSTER]);
    expect(receipts.rows.map((r) => r.signature).sort(), 'one receipt per transfer').to.deep.equal([...sigs].sort());
    const inv = await db.pool.query(`SELECT status FROM invoices WHERE id = 'inv-any'`);
    expect(inv.rows[0].status).to.equal('paid');

    // SIGTERM: both drain and exit 0 with their counters.
    stream.child.kill('SIGTERM');
    ws.child.kill('SIGTERM');
    for (const p of [stream, ws]) {
      const end = await p.done;
      expect(end.code, end.stderr.slice(-2000)).to.equal(0);
      // No summary with exit 0 means the drain ran past its bound (common/shutdown's forced exit): say so, with
      // the process's own log, rather than fail on JSON.parse('').
      const last = end.stdout.trim().split('\n').pop() ?? '';
      expect(last, `no counters printed: the drain was cut short?\n${end.stderr.slice(-3000)}`).to.match(/^\{/);
      const summary = JSON.parse(last);
      expect(summary).to.include({ cluster: CLUSTER });
      expect(summary.reconnects, 'the outage was a reconnect, not a crash').to.be.at.least(1);
    }
  });
});
