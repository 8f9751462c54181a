// Real processes: `oncepay indexer run` killed with SIGKILL right after a batch commit and restarted from its
// checkpoint; `oncepay indexer backfill` racing a running scanner; SIGTERM stopping the scanner gracefully.
import { expect } from 'chai';
import { ChildProcess, spawn } from 'child_process';
import * as path from 'path';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { blockAt, ReplayRpc, startReplayRpc, transferCheckedTx } from '../../../testkit/replay-rpc';
import { buildChain, createChainInvoice, expectExactTotals, loadChain, totals } from './chain-fixture';

const BIN = path.resolve(__dirname, '../../../bin/oncepay');

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

describe('indexer/source CLI processes (crash, restart, backfill beside the scanner)', () => {
  let db: TestDb;
  let rpc: ReplayRpc;
  const children = new Set<ChildProcess>();

  before(async () => {
    db = await createTestDb('scanner_cli');
    rpc = await startReplayRpc();
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await rpc.close();
    await db.drop();
  });

  const stderrs = new WeakMap<ChildProcess, () => string>();
  async function stderrOf(p: { child: ChildProcess }): Promise<string> {
    return stderrs.get(p.child)!();
  }

  function start(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Exit> } {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...db.env, ONCEPAY_FROM_SOURCE: '1', NODE_ENV: 'test', ONCEPAY_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    stderrs.set(child, () => stderr);
    const done = new Promise<Exit>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
    );
    return { child, done };
  }

  async function waitFor(pred: () => Promise<boolean>, what: string, limitMs = 60_000): Promise<void> {
    const until = Date.now() + limitMs;
    while (!(await pred())) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('SIGKILL right after a batch commit, then a restart from the checkpoint: exact totals', async () => {
    const cluster = 'crash';
    const chain = buildChain({ from: 1, to: 80, skipEvery: 11 });
    loadChain(rpc, chain, 80);
    await createChainInvoice(db.pool, chain);
    const args = [
      'indexer',
      'run',
      '--rpc',
      rpc.url,
      '--cluster',
      cluster,
      '--from-slot',
      '1',
      '--chunk-size',
      '5',
      '--concurrency',
      '2',
      '--poll-ms',
      '20',
      '--rpc-timeout-ms',
      '2000',
      '--once',
    ];

    const crashed = await start(args, { ONCEPAY_FAILPOINT: 'scanner.after_batch_commit@3' }).done;
    expect(crashed.signal, crashed.stderr).to.equal('SIGKILL');
    expect(crashed.stderr).to.include('scanner.after_batch_commit');
    const mid = await totals(db.pool, cluster);
    // Three batches of five blocks were committed, each with its checkpoint: nothing more, nothing less.
    expect(mid.checkpoints.scanner).to.be.greaterThan(0).and.lessThan(80);
    const committedSlots = [...chain.blocks.keys()].filter((s) => s <= mid.checkpoints.scanner);
    expect(committedSlots.length).to.equal(15);
    expect(mid.receipts).to.equal(15 * 2);

    const restarted = await start(args).done;
    expect(restarted.code, restarted.stderr).to.equal(0);
    expect(JSON.parse(restarted.stdout.trim().split('\n').at(-1)!)).to.deep.include({ cluster, checkpoint: '80' });
    const t = await expectExactTotals(db.pool, cluster, chain);
    // The restart re-read the window below the checkpoint: those were duplicates, not new credits.
    expect(t.duplicates.scanner).to.be.greaterThan(0);
  });

  it('`indexer webhook` and `indexer backfill` refuse --commitment confirmed with a stable code (a credit at confirmed is money a fork can take back)', async () => {
    const webhook = [
      'indexer',
      'webhook',
      '--rpc',
      rpc.url,
      '--cluster',
      'c',
      '--port',
      '0',
      '--commitment',
      'confirmed',
    ];
    const backfill = ['indexer', 'backfill', '--rpc', rpc.url, '--cluster', 'c', '--from-slot', '1', '--to-slot', '2'];
    for (const args of [webhook, [...backfill, '--commitment', 'confirmed']]) {
      // With a secret the webhook would otherwise start: a process that says it listens is killed, and fails below.
      const p = start(args, { ONCEPAY_WEBHOOK_SECRET: 'a-secret-of-sufficient-length-0123456789' });
      p.child.stdout!.on('data', (d) => String(d).includes('"listening"') && p.child.kill('SIGKILL'));
      const r = await p.done;
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.include('ONCEPAY__SOURCE__COMMITMENT_UNSUPPORTED');
    }
  });

  it('`indexer run --once` stopped below the tip by an unavailable block exits 3 and names the slot', async () => {
    const cluster = 'stopped';
    const chain = buildChain({ from: 2000, to: 2020 });
    loadChain(rpc, chain, 2020);
    rpc.inject({ kind: 'blockNotAvailable', method: 'getBlock', slot: 2011, times: Infinity });
    try {
      const r = await start(['indexer', 'run', '--rpc', rpc.url, '--cluster', cluster, '--from-slot', '2000', '--once'])
        .done;
      expect(r.code, r.stderr).to.equal(3);
      const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
      expect(out).to.deep.include({ checkpoint: '2010', target: 2020 });
      expect(out.stoppedAt).to.deep.include({ slot: 2011, code: 'ONCEPAY__SOURCE__BLOCK_NOT_AVAILABLE' });
    } finally {
      rpc.clearFaults();
    }
  });

  it('`indexer run --commitment confirmed --once` credits finalized blocks and keeps confirmed ones provisional', async () => {
    const cluster = 'confirmed-cli';
    const chain = buildChain({ from: 3000, to: 3010 });
    loadChain(rpc, chain, 3006);
    rpc.setTip({ finalized: 3006, confirmed: 3010 });
    const r = await start([
      'indexer',
      'run',
      '--rpc',
      rpc.url,
      '--cluster',
      cluster,
      '--from-slot',
      '3000',
      '--commitment',
      'confirmed',
      '--once',
    ]).done;
    expect(r.code, r.stderr).to.equal(0);
    const t = await totals(db.pool, cluster);
    expect(t.receipts).to.equal(7 * 2);
    const { rows } = await db.pool.query(
      `SELECT min(slot)::int AS lo, max(slot)::int AS hi, count(*)::int AS n FROM provisional_receipts WHERE cluster = $1 AND state = 'provisional'`,
      [cluster],
    );
    expect(rows[0]).to.deep.equal({ lo: 3007, hi: 3010, n: 8 });
  });

  it('`indexer backfill` never credits a transfer its balances refute, and is not stopped by it: skipped, logged, the rest exact', async () => {
    const cluster = 'forged-balance';
    await db.pool.query(
      'TRUNCATE invoices, receipts, exceptions, fulfilments, outbox, checkpoints, receipt_delivery_counts CASCADE',
    );
    const chain = buildChain({ from: 4000, to: 4010 });
    // Slot 4005 also carries a transaction whose instruction says 1,000,000 while the balances moved 1.
    const forged = transferCheckedTx({ amount: 1_000_000n, mint: chain.mint, destinationOwner: chain.owner }) as {
      meta: { postTokenBalances: Array<{ uiTokenAmount: { amount: string } }> };
    };
    forged.meta.postTokenBalances[1].uiTokenAmount.amount = '1';
    const block = chain.blocks.get(4005) as { transactions: unknown[] };
    chain.blocks.set(4005, blockAt(4005, [...block.transactions, forged]));
    loadChain(rpc, chain, 4010);
    await createChainInvoice(db.pool, chain);
    const r = await start([
      'indexer',
      'backfill',
      '--rpc',
      rpc.url,
      '--cluster',
      cluster,
      '--from-slot',
      '4000',
      '--to-slot',
      '4010',
    ]).done;
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout.trim())).to.deep.include({ failed: 0, receipts: chain.receipts });
    expect(r.stderr).to.include('ONCEPAY__DECODE__BALANCE_MISMATCH');
    await expectExactTotals(db.pool, cluster, chain);
  });

  it('a backfill racing a running scanner over the same slots gives the same totals; SIGTERM stops the scanner cleanly', async () => {
    const cluster = 'overlap';
    await db.pool.query(
      'TRUNCATE invoices, receipts, exceptions, fulfilments, outbox, checkpoints, receipt_delivery_counts CASCADE',
    );
    const chain = buildChain({ from: 1000, to: 1300, skipEvery: 13, perBlock: 3 });
    loadChain(rpc, chain, 1300);
    await createChainInvoice(db.pool, chain);
    const scanner = start([
      'indexer',
      'run',
      '--rpc',
      rpc.url,
      '--cluster',
      cluster,
      '--from-slot',
      '1000',
      '--chunk-size',
      '10',
      '--poll-ms',
      '20',
      '--metrics-port',
      '0',
    ]);
    const backfill = start([
      'indexer',
      'backfill',
      '--rpc',
      rpc.url,
      '--cluster',
      cluster,
      '--from-slot',
      '1000',
      '--to-slot',
      '1300',
      '--chunk-size',
      '10',
    ]);
    const b = await backfill.done;
    expect(b.code, b.stderr).to.equal(0);
    // Not a TTY here: progress comes as JSON lines on stderr, the summary as JSON on stdout.
    expect(b.stderr).to.include('"msg":"backfill progress"');
    const summary = JSON.parse(b.stdout.trim());
    expect(summary).to.deep.include({ total: 301, failed: 0 });
    expect(summary.receipts).to.equal(chain.receipts);

    await waitFor(
      async () => (await totals(db.pool, cluster)).checkpoints.scanner === 1300,
      'the scanner to reach the tip',
    );
    // --metrics-port 0: the scanner logs where /metrics listens; lag is 0 at the tip.
    const metricsUrl = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(await stderrOf(scanner))?.[1];
    expect(metricsUrl).to.be.a('string');
    await waitFor(
      async () =>
        (await (await fetch(metricsUrl!)).text()).includes(
          `oncepay_checkpoint_lag_slots{cluster="${cluster}",source="scanner"} 0`,
        ),
      'lag 0 on /metrics',
    );
    scanner.child.kill('SIGTERM');
    const s = await scanner.done;
    expect(s.code, s.stderr).to.equal(0);
    expect(s.stderr).to.include('stopping after the current step');

    const t = await expectExactTotals(db.pool, cluster, chain);
    // Every receipt was delivered by both paths: one insert, the other a duplicate.
    const d = await db.pool.query(
      `SELECT sum(inserted)::int AS inserted, sum(duplicates)::int AS dup FROM receipt_delivery_counts WHERE cluster = $1`,
      [cluster],
    );
    expect(d.rows[0].inserted).to.equal(chain.receipts);
    expect(d.rows[0].dup).to.be.at.least(chain.receipts);
    expect(t.checkpoints.backfill).to.equal(undefined);
  });
});
