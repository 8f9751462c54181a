// `oncepay indexer run` (the scanner) and `oncepay indexer backfill` through a real PostgreSQL restart and
// pg_terminate_backend of their sessions while the chain grows: the scanner stays up, backs off, recovers by
// itself, and the ledger ends with exact totals (each transfer credited once). A backfill started while the
// database is down waits for it and completes. SIGTERM with a ledger batch in flight: the batch commits, exit 0.
import { expect } from 'chai';
import { ReplayRpc, startReplayRpc } from '../../testkit/replay-rpc';
import { buildChain, Chain, createChainInvoice, totals } from '../indexer/source/chain-fixture';
import { FaultDb, freePort, getJson, Proc, startFaultDb, startOncepay, waitFor } from './support';
import { currentSuite, expectNoSecretShown, passwordOf, RPC_API_KEY, withApiKey } from './secrets';

const CLUSTER = 'faults';
const APP = 'oncepay-indexer-run';
const TIP = 120;

describe('faults: scanner and backfill through database restarts and terminated sessions', function () {
  // Real processes and a real server restart on a shared machine: no speed is asserted, so allow for a slow one.
  this.timeout(600_000);
  let db: FaultDb;
  let rpc: ReplayRpc;
  /**
   * The processes' environment: the database, and the RPC URL with a provider's API key (ONCEPAY_RPC_URL, not --rpc),
   * at info level, so the lines that name the endpoint ("scanner starting") are written and checked.
   */
  const rpcEnv = () => ({ ...db.env, ONCEPAY_RPC_URL: withApiKey(rpc.url), ONCEPAY_LOG_LEVEL: 'info' });
  let chain: Chain;
  let scanner: Proc;
  let metrics: string;

  before(async () => {
    db = await startFaultDb('scanner');
    rpc = await startReplayRpc();
    chain = buildChain({ from: 1, to: TIP + 40, skipEvery: 9 });
    for (const [s, b] of chain.blocks) rpc.setBlock(s, b);
    await createChainInvoice(db.pool, chain);
  });
  after(async () => {
    if (scanner?.alive()) scanner.child.kill('SIGKILL');
    await rpc.close();
    await db.close();
  });

  const checkpoint = async () => (await totals(db.pool, CLUSTER)).checkpoints.scanner ?? -1;
  /** The chain up to `slot`: its receipts and amount. */
  function upTo(slot: number): { receipts: number; amount: bigint } {
    let receipts = 0;
    let amount = 0n;
    for (const s of chain.blocks.keys()) if (s <= slot) receipts += 2;
    for (let s = 1; s <= slot; s++)
      if (chain.blocks.has(s)) amount += BigInt(1000 + s * 10) + BigInt(1000 + s * 10 + 1);
    return { receipts, amount };
  }

  it('stays up through a restart and a pg_terminate_backend while the chain grows; exact totals after', async () => {
    const port = await freePort();
    metrics = `http://127.0.0.1:${port}`;
    rpc.setTip({ finalized: 10, confirmed: 15 });
    scanner = startOncepay(
      [
        'indexer',
        'run',
        '--cluster',
        CLUSTER,
        '--from-slot',
        '1',
        '--rescan-window',
        '8',
        '--chunk-size',
        '20',
        '--poll-ms',
        '50',
        '--rpc-timeout-ms',
        '2000',
        '--metrics-port',
        String(port),
      ],
      rpcEnv(),
    );
    await waitFor(async () => (await checkpoint()) >= 10, 'the first blocks');
    for (let tip = 20; tip <= TIP; tip += 10) {
      rpc.setTip({ finalized: tip, confirmed: tip + 5 });
      if (tip === 50) {
        await db.restart(async () => {
          const ready = await getJson(`${metrics}/readyz`);
          expect([ready.status, ready.body.code]).to.deep.equal([503, 'DATABASE_UNAVAILABLE']);
          expect((await getJson(`${metrics}/healthz`)).status).to.equal(200);
          await new Promise((r) => setTimeout(r, 300)); // passes fail while it is down
        });
      }
      if (tip === 90) await waitFor(async () => (await db.terminate(APP)) > 0, 'a session to terminate');
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitFor(async () => (await checkpoint()) === TIP, 'the checkpoint to reach the tip');
    expect(scanner.alive(), scanner.stderr()).to.equal(true);
    expect(scanner.stderr(), 'the scanner saw the faults').to.match(/scan pass failed|database connection lost/);
    expect((await getJson(`${metrics}/readyz`)).status).to.equal(200);
    const t = await totals(db.pool, CLUSTER);
    const want = upTo(TIP);
    expect({ receipts: t.receipts, amount: t.amount, credited: t.credited, exceptions: t.exceptions }).to.deep.equal({
      receipts: want.receipts,
      amount: want.amount,
      credited: want.amount,
      exceptions: 0,
    });
  });

  it('a backfill started while the database is down waits for it, then completes: nothing applied twice', async () => {
    let backfill: Proc | undefined;
    await db.restart(async () => {
      backfill = startOncepay(
        [
          'indexer',
          'backfill',
          '--cluster',
          CLUSTER,
          '--from-slot',
          '1',
          '--to-slot',
          String(TIP),
          '--chunk-size',
          '10',
        ],
        rpcEnv(),
      );
      await waitFor(
        () => backfill!.stderr().includes('database unavailable; backing off'),
        'the backfill to wait for the database',
      );
      expect(backfill!.alive()).to.equal(true);
    });
    const exit = await backfill!.done;
    expect(exit.code, exit.stderr).to.equal(0);
    const r = JSON.parse(exit.stdout);
    expect(r).to.include({ inserted: 0, failed: 0 });
    expect(r.duplicates).to.equal(upTo(TIP).receipts);
    const t = await totals(db.pool, CLUSTER);
    expect([t.receipts, t.credited, t.exceptions]).to.deep.equal([upTo(TIP).receipts, upTo(TIP).amount, 0]);
  });

  it('SIGTERM with a ledger batch in flight: the batch commits (the checkpoint moves with it), exit 0', async () => {
    // One pass = one chunk here (--chunk-size 20 ≥ re-scan window + 4 new slots): the held batch carries the new slots.
    const blocker = await db.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE receipts IN EXCLUSIVE MODE');
      rpc.setTip({ finalized: TIP + 4, confirmed: TIP + 9 });
      await waitFor(async () => (await db.waiting(APP)) > 0, 'a batch to wait on the lock');
      scanner.child.kill('SIGTERM');
      await blocker.query('COMMIT');
    } finally {
      blocker.release(true); // closed: a failure before COMMIT must not leave the lock held
    }
    const exit = await scanner.done;
    expect(exit.code, exit.stderr).to.equal(0);
    const printed = JSON.parse(exit.stdout.trim().split('\n').pop()!);
    expect(Number(printed.checkpoint)).to.equal(TIP + 4);
    expect(await checkpoint()).to.equal(TIP + 4);
    const t = await totals(db.pool, CLUSTER);
    expect([t.receipts, t.credited]).to.deep.equal([upTo(TIP + 4).receipts, upTo(TIP + 4).amount]);
  });

  it('SIGTERM of a backfill with a batch in flight: the batch commits, it prints where to resume, exit 0', async () => {
    rpc.setTip({ finalized: TIP + 4, confirmed: TIP + 9 });
    const blocker = await db.pool.connect();
    let backfill: Proc;
    try {
      await blocker.query('BEGIN');
      // Every receipt is known by now, so the batch writes only its delivery counters: hold those.
      await blocker.query('LOCK TABLE receipt_delivery_counts IN EXCLUSIVE MODE');
      backfill = startOncepay(
        [
          'indexer',
          'backfill',
          '--cluster',
          CLUSTER,
          '--from-slot',
          '1',
          '--to-slot',
          String(TIP),
          '--chunk-size',
          '10',
        ],
        rpcEnv(),
      );
      await waitFor(
        async () => (await db.waiting('oncepay-indexer-backfill')) > 0,
        'the first batch to wait on the lock',
      ).catch((e) => {
        throw new Error(`${e.message}: ${backfill.stderr().slice(-3000)}`);
      });
      backfill.child.kill('SIGTERM');
      await waitFor(() => backfill.stderr().includes('stopping after the current step'), 'the stop to be taken');
      await blocker.query('COMMIT');
    } finally {
      blocker.release(true); // closed: a failure before COMMIT must not leave the lock held
    }
    const exit = await backfill.done;
    expect(exit.code, exit.stderr).to.equal(0);
    const r = JSON.parse(exit.stdout);
    // The held batch (the first ten listed blocks) was applied; the run stopped before the next one.
    const firstTen = [...chain.blocks.keys()]
      .filter((s) => s <= TIP)
      .sort((a, b) => a - b)
      .slice(0, 10);
    expect(r.interrupted).to.deep.equal({ resumeFromSlot: firstTen[9] + 1 });
    expect([r.blocks, r.duplicates, r.inserted]).to.deep.equal([10, 20, 0]);
  });

  it('no process of this suite showed a secret it was configured with: not the RPC API key or the database password, in its output or its command line', () => {
    expectNoSecretShown(currentSuite(), [RPC_API_KEY, passwordOf(db.url)]);
  });
});
