// The Yellowstone stream source against localnet's Geyser service with the real client: real token transfers
// credited once from finalized slots, confirmed ones kept provisional first, a stream dropped mid-block resumed
// from the source's own checkpoint, and the scanner delivering the same transfers afterwards as duplicates.
import { expect } from 'chai';
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import Client from '@triton-one/yellowstone-grpc';
import { logger } from '../../../common/log';
import { startLocalnet, LocalnetHandle } from '../../../localnet';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { skipOnExternalNode } from '../../../testkit/node';
import { decodeBlock } from '../../../indexer/decode';
import { createRpcClient } from '../../../indexer/rpc';
import { createScanner } from '../../../indexer/source/scanner';
import { createProvisionalStore } from '../../../indexer/source/provisional';
import { createStreamSource, GeyserClient } from '../../../indexer/source/stream';
import { watchedAddresses } from '../../../indexer/source/watched';
import { confirm } from '../../../testkit/cluster';
import { merchantWithInvoice, transfers, until } from './transfer-fixture';

const cluster = 'localnet-stream';
const BIN = path.resolve(__dirname, '../../../bin/oncepay');

describe('indexer/source stream: Yellowstone gRPC over localnet (real client)', function () {
  this.timeout(120_000);
  let net: LocalnetHandle;
  let db: TestDb;

  before(async function () {
    skipOnExternalNode(this, "the stream is tested against localnet's Yellowstone server (and its dropped streams)");
    net = await startLocalnet({ slotMs: 20, finalityDepth: 4, wsOnNextPort: false, geyser: {} });
    db = await createTestDb('stream_localnet');
  });
  after(async () => {
    await net?.stop();
    await db?.drop();
  });

  it('credits each transfer once at finality through a mid-block drop; the scanner then finds only duplicates', async () => {
    const amounts = [1_500_000n, 2_250_000n, 1n, 999_999n];
    const expected = amounts.reduce((a, b) => a + b, 0n);
    const { connection, payer, mint, source, ata, startSlot, ledger } = await merchantWithInvoice(
      net,
      db,
      'inv-stream',
      expected,
    );
    expect(await watchedAddresses(db.pool)).to.include(ata.toBase58());

    const ac = new AbortController();
    const applied: number[] = [];
    const stream = createStreamSource(
      {
        client: () => new Client(net.grpcUrl!, undefined, undefined) as unknown as GeyserClient,
        ledger,
        watched: () => watchedAddresses(db.pool),
        provisional: createProvisionalStore(db.pool),
        onApplied: (r) => applied.push(r.slot),
        log: logger('stream'),
      },
      {
        cluster,
        commitment: 'confirmed',
        fromSlot: startSlot,
        pingMs: 200,
        idleTimeoutMs: 5_000,
        refreshMs: 200,
        backoff: { baseMs: 20, capMs: 200 },
      },
    );
    const running = stream.run({ signal: ac.signal });
    await until('the first finalized slot', async () => applied.length > 0);

    // The open stream ends after one more transaction update: mid-block when the next block holds several.
    net.faults.dropGeyserStreams({ afterTransactions: 1 });
    const sigs = await transfers({ connection, payer, mint, source, ata }, amounts);
    // A transfer the stream does not watch (native SOL to a stranger).
    const other = await connection.sendTransaction(
      new Transaction().add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1e9 }),
      ),
      [payer],
    );
    const slots = await Promise.all([...sigs, other].map((s) => confirm(connection, s)));
    const last = Math.max(...slots);
    await until('the stream checkpoint past the transfers', async () => (stream.stats().checkpoint ?? 0) >= last);

    const inv = await db.pool.query(`SELECT credited_amount::text AS c, status FROM invoices WHERE id = 'inv-stream'`);
    expect(inv.rows[0]).to.deep.equal({ c: expected.toString(), status: 'paid' });
    const receipts = await db.pool.query(
      `SELECT signature, first_source::text AS s FROM receipts WHERE cluster = $1 ORDER BY signature`,
      [cluster],
    );
    expect(receipts.rows.map((r) => r.signature).sort(), 'one receipt per transfer').to.deep.equal([...sigs].sort());
    expect(new Set(receipts.rows.map((r) => r.s))).to.deep.equal(new Set(['stream']));
    expect(stream.stats().reconnects, 'the dropped stream was resumed').to.be.at.least(1);
    const prov = await db.pool.query(
      `SELECT state::text, count(*)::int AS n FROM provisional_receipts WHERE cluster = $1 GROUP BY state`,
      [cluster],
    );
    expect(prov.rows).to.deep.equal([{ state: 'final', n: amounts.length }]);

    // SIGTERM-like stop: the loop ends, nothing left running.
    ac.abort();
    const stats = await running;
    expect(stats.inserted).to.equal(amounts.length);

    // The scanner, the source of truth, reads the same blocks: every transfer is already there.
    const scanner = createScanner(
      {
        rpc: createRpcClient({ url: net.url }),
        ledger,
        decode: (block, slot) => decodeBlock(block, { slot, cluster }),
      },
      {
        cluster,
        commitment: 'finalized',
        rescanWindow: 0,
        fromSlot: startSlot,
        maxSlotsPerPass: 5000,
        chunkSize: 50,
        concurrency: 4,
        pollMs: 20,
      },
    );
    const pass = await scanner.run({ once: true });
    // New to the ledger: only the transfer the stream does not watch (native SOL to a stranger).
    expect(pass?.inserted).to.equal(1);
    const strangers = await db.pool.query(`SELECT first_source::text AS s FROM receipts WHERE signature = $1`, [other]);
    expect(strangers.rows).to.deep.equal([{ s: 'scanner' }]);
    const counts = await db.pool.query(
      `SELECT source::text, inserted::int, duplicates::int FROM receipt_delivery_counts WHERE cluster = $1 ORDER BY source`,
      [cluster],
    );
    expect(counts.rows).to.deep.equal([
      { source: 'scanner', inserted: 1, duplicates: amounts.length },
      { source: 'stream', inserted: amounts.length, duplicates: stats.duplicates },
    ]);
    const again = await db.pool.query(`SELECT credited_amount::text AS c FROM invoices WHERE id = 'inv-stream'`);
    expect(again.rows[0].c).to.equal(expected.toString());
  });

  it('the `oncepay indexer stream` process: x-token from a file, SIGKILL then a restart from its checkpoint, SIGTERM drains', async () => {
    const guarded = await startLocalnet({
      slotMs: 20,
      finalityDepth: 4,
      wsOnNextPort: false,
      geyser: { xToken: 'tok-123', replaySlots: 1_000_000 },
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-stream-'));
    const children: ChildProcess[] = [];
    try {
      const cluster = 'localnet-stream-cli';
      const first = [3_000_000n, 4_000_000n];
      const second = [5_000_000n, 6n];
      const expected = [...first, ...second].reduce((a, b) => a + b, 0n);
      const m = await merchantWithInvoice(guarded, db, 'inv-stream-cli', expected);
      const tokenFile = path.join(dir, 'x-token');
      fs.writeFileSync(tokenFile, 'tok-123\n', { mode: 0o600 });
      const args = [
        'indexer',
        'stream',
        '--grpc',
        guarded.grpcUrl!,
        '--x-token-file',
        tokenFile,
        '--cluster',
        cluster,
        '--commitment',
        'confirmed',
        '--from-slot',
        String(m.startSlot),
        '--ping-ms',
        '200',
        '--refresh-ms',
        '200',
      ];
      const start = () => {
        const child = spawn(process.execPath, [BIN, ...args], {
          env: { ...process.env, ...db.env, ONCEPAY_FROM_SOURCE: '1', NODE_ENV: 'test', ONCEPAY_LOG_LEVEL: 'info' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        children.push(child);
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (d) => (stdout += d));
        child.stderr!.on('data', (d) => (stderr += d));
        const done = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>(
          (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
        );
        return { child, done };
      };
      const credited = async () =>
        BigInt(
          (await db.pool.query(`SELECT credited_amount::text AS c FROM invoices WHERE id = 'inv-stream-cli'`)).rows[0]
            .c,
        );

      const a = start();
      const s1 = await transfers(m, first);
      await until('the first transfers credited', async () => (await credited()) === first[0] + first[1], 60_000).catch(
        async (e) => {
          a.child.kill('SIGKILL');
          throw new Error(`${(e as Error).message}: ${(await a.done).stderr.slice(-3000)}`);
        },
      );
      a.child.kill('SIGKILL');
      expect((await a.done).signal).to.equal('SIGKILL');

      // While it is down: more transfers, finalized before it comes back (resumed from its checkpoint by from_slot).
      const s2 = await transfers(m, second);
      const last = Math.max(...(await Promise.all(s2.map((x) => confirm(m.connection, x)))));
      await until('finality past them', async () => (await m.connection.getSlot('finalized')) >= last);
      const b = start();
      await until('every transfer credited', async () => (await credited()) === expected, 60_000).catch(async (e) => {
        b.child.kill('SIGKILL');
        throw new Error(`${(e as Error).message}: ${(await b.done).stderr.slice(-3000)}`);
      });
      b.child.kill('SIGTERM');
      const end = await b.done;
      expect(end.code, end.stderr.slice(-2000)).to.equal(0);
      const summary = JSON.parse(end.stdout.trim().split('\n').pop()!);
      expect(summary).to.include({ cluster });
      expect(summary.checkpoint).to.be.at.least(last);

      const receipts = await db.pool.query(`SELECT signature FROM receipts WHERE cluster = $1`, [cluster]);
      expect(receipts.rows.map((r) => r.signature).sort(), 'one receipt per transfer').to.deep.equal(
        [...s1, ...s2].sort(),
      );
      const counts = await db.pool.query(
        `SELECT inserted::int FROM receipt_delivery_counts WHERE cluster = $1 AND source = 'stream'`,
        [cluster],
      );
      expect(counts.rows).to.deep.equal([{ inserted: 4 }]);
      const paid = await db.pool.query(`SELECT status FROM invoices WHERE id = 'inv-stream-cli'`);
      expect(paid.rows[0].status).to.equal('paid');
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
      await guarded.stop();
    }
  });
});
