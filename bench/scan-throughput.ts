// Scanner throughput over the loopback replay RPC server into the real ledger (PostgreSQL): blocks/s and
// receipts/s for a few (chunk size, getBlock concurrency) settings, measured side by side in one run, with the
// ratio to the one-block-per-transaction, one-request-at-a-time baseline. Also the cost of a re-scan pass
// (every receipt already there) relative to a first pass.
import { createTestDb, leavingServerAsFound } from '../testkit/test-db';
import { blockAt, startReplayRpc, transferCheckedTx, randomAddress } from '../testkit/replay-rpc';
import { createLedger } from '../indexer/ledger';
import { decodeBlock } from '../indexer/decode';
import { createRpcClient } from '../indexer/rpc';
import { createScanner } from '../indexer/source/scanner';
import { acceptingLedger } from '../testkit/accepting-ledger';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { machineLabel } from './machine';

const BLOCKS = Number(process.env.BENCH_SCAN_BLOCKS ?? 600);
const PER_BLOCK = 4;

async function main(): Promise<void> {
  const db = await createTestDb('bench_scan');
  const rpc = await startReplayRpc();
  try {
    const owner = randomAddress();
    const mint = randomAddress();
    for (let s = 1; s <= BLOCKS; s++) {
      rpc.setBlock(
        s,
        blockAt(
          s,
          Array.from({ length: PER_BLOCK }, (_, k) =>
            transferCheckedTx({ amount: BigInt(1 + s * 10 + k), mint, destinationOwner: owner }),
          ),
        ),
      );
    }
    rpc.setTip({ finalized: BLOCKS });
    const settings = [
      { chunkSize: 1, concurrency: 1 },
      { chunkSize: 50, concurrency: 1 },
      { chunkSize: 50, concurrency: 4 },
      { chunkSize: 200, concurrency: 8 },
    ];
    const rows: Array<{ label: string; ms: number; rescanMs: number }> = [];
    for (const [i, st] of settings.entries()) {
      const cluster = `bench-${i}`;
      const scanner = createScanner(
        {
          rpc: createRpcClient({ url: rpc.url }),
          ledger: createLedger({ db: db.pool }),
          decode: (b, slot) => decodeBlock(b, { slot, cluster }),
        },
        { cluster, commitment: 'finalized', rescanWindow: 0, fromSlot: 1, maxSlotsPerPass: BLOCKS, pollMs: 10, ...st },
      );
      const t0 = performance.now();
      await scanner.runPass();
      const ms = performance.now() - t0;
      // A re-scan of the whole range: every receipt is a duplicate.
      const again = createScanner(
        {
          rpc: createRpcClient({ url: rpc.url }),
          ledger: createLedger({ db: db.pool }),
          decode: (b, slot) => decodeBlock(b, { slot, cluster }),
        },
        {
          cluster,
          commitment: 'finalized',
          rescanWindow: BLOCKS,
          fromSlot: 1,
          maxSlotsPerPass: BLOCKS,
          pollMs: 10,
          ...st,
          source: 'backfill',
        },
      );
      await db.pool.query(`INSERT INTO checkpoints (cluster, source, slot) VALUES ($1, 'backfill', 0)`, [cluster]);
      const t1 = performance.now();
      const p = await again.runPass();
      const rescanMs = performance.now() - t1;
      if (p.inserted !== 0 || p.duplicates !== BLOCKS * PER_BLOCK)
        throw new OncepayError(BENCH_CODES.CHECK_FAILED, `re-scan not all duplicates: ${JSON.stringify(p)}`);
      rows.push({ label: `chunk=${st.chunkSize} concurrency=${st.concurrency}`, ms, rescanMs });
    }
    // Attribution: the same best setting with the ledger call replaced by a no-op (RPC + JSON + decode only).
    {
      const st = settings[settings.length - 1];
      const noLedger = acceptingLedger();
      const scanner = createScanner(
        {
          rpc: createRpcClient({ url: rpc.url }),
          ledger: noLedger,
          decode: (b, slot) => decodeBlock(b, { slot, cluster: 'x' }),
        },
        {
          cluster: 'x',
          commitment: 'finalized',
          rescanWindow: 0,
          fromSlot: 1,
          maxSlotsPerPass: BLOCKS,
          pollMs: 10,
          ...st,
        },
      );
      const t0 = performance.now();
      await scanner.runPass();
      const ms = performance.now() - t0;
      rows.push({ label: `chunk=${st.chunkSize} conc=${st.concurrency} no ledger`, ms, rescanMs: ms });
    }
    const base = rows[0].ms;
    const machine = machineLabel();
    console.log(
      `scan-throughput: ${BLOCKS} blocks × ${PER_BLOCK} transfers, replay RPC on loopback (same process), PostgreSQL ledger`,
    );
    for (const r of rows) {
      console.log(
        `  ${r.label.padEnd(28)} speed-up vs chunk=1/conc=1: ${(base / r.ms).toFixed(2)}x | re-scan/first-pass time: ${(r.rescanMs / r.ms).toFixed(2)}` +
          ` | absolute [${machine}]: ${((BLOCKS / r.ms) * 1000).toFixed(0)} blocks/s, ${(((BLOCKS * PER_BLOCK) / r.ms) * 1000).toFixed(0)} receipts/s`,
      );
    }
  } finally {
    await rpc.close();
    await db.drop();
  }
}

leavingServerAsFound(main).catch((e) => {
  console.error(e);
  process.exit(1);
});
