// The Yellowstone stream source end to end (not a test; `make bench`): a localnet serving geyser, K token transfers
// to watched deposit accounts sent as fast as the node takes them, and `oncepay indexer stream --grpc …` (its own
// process, the real client, `finalized` into the ledger) feeding the ledger. Prints receipts/s from the first send to
// the last receipt in the ledger, the send rate alone beside it (what the node took), and checks the credited total.
// Slots of BENCH_STREAM_SLOT_MS (default 100) and finality BENCH_STREAM_DEPTH slots deep (default 4), so the fixed
// wait for finality stays small beside K (BENCH_STREAM_K, default 500) transfers. Uses DATABASE_URL, else the
// embedded server (stopped at the end if this run started it); its own schema, dropped at the end.
import { ChildProcess, spawn } from 'child_process';
import * as path from 'path';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { createLedger } from '../indexer/ledger';
import { startLocalnet } from '../localnet';
import { airdrop, mintWithSource, send } from '../testkit/cluster';
import { createTestDb, leavingServerAsFound } from '../testkit/test-db';
import { until } from '../testkit/until';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { machineLabel } from './machine';

const K = Number(process.env.BENCH_STREAM_K ?? 500);
const SLOT_MS = Number(process.env.BENCH_STREAM_SLOT_MS ?? 100);
const DEPTH = Number(process.env.BENCH_STREAM_DEPTH ?? 4);
const WALLETS = 16;
// Transfers in flight at once, and how many share one blockhash (it lives 150 slots).
const IN_FLIGHT = 16;
const PER_BLOCKHASH = 200;
const CLUSTER = 'bench-stream';
const BIN = path.resolve(__dirname, '../bin/oncepay');

async function main() {
  // A schema of its own, migrated, dropped at the end (as each test suite gets).
  const db = await createTestDb('bench_stream');
  const pool = db.pool;
  const net = await startLocalnet({ slotMs: SLOT_MS, finalityDepth: DEPTH, wsOnNextPort: false, geyser: {} });
  let child: ChildProcess | undefined;
  try {
    const connection = new Connection(net.url, 'confirmed');
    const payer = Keypair.generate();
    await airdrop(connection, payer.publicKey, 100_000_000_000);
    const { mint, source } = await mintWithSource(connection, payer, 6, 10n ** 15n);
    // WALLETS merchants, each with an associated token account and an open invoice far larger than K transfers.
    const ledger = createLedger({ db: pool });
    const atas: PublicKey[] = [];
    for (let w = 0; w < WALLETS; w++) {
      const wallet = Keypair.generate().publicKey;
      const ata = getAssociatedTokenAddressSync(mint, wallet);
      await send(
        connection,
        [createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, wallet, mint)],
        [payer],
      );
      atas.push(ata);
      await ledger.createInvoice({
        id: `S-${w}`,
        mint: mint.toBase58(),
        expectedAmount: 10n ** 15n,
        depositAddress: wallet.toBase58(),
      });
    }
    const fromSlot = await connection.getSlot('finalized');

    child = spawn(
      process.execPath,
      [BIN, 'indexer', 'stream', '--grpc', net.grpcUrl!, '--cluster', CLUSTER, '--from-slot', String(fromSlot)],
      {
        env: { ...process.env, ...db.env, ONCEPAY_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
    // Ready once it has applied a finalized slot (its checkpoint is written with each).
    await until(
      'the stream source to apply its first finalized slot',
      async () =>
        (await pool.query(`SELECT 1 FROM checkpoints WHERE cluster = $1 AND source = 'stream'`, [CLUSTER])).rowCount,
      { timeoutMs: 120_000, intervalMs: 20 },
    );

    const amounts = Array.from({ length: K }, (_, i) => BigInt(1 + i));
    const t0 = performance.now();
    let next = 0;
    let blockhash = '';
    async function sender() {
      for (let i = next++; i < K; i = next++) {
        if (i % PER_BLOCKHASH === 0 || !blockhash) blockhash = (await connection.getLatestBlockhash()).blockhash;
        const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
          createTransferCheckedInstruction(source, mint, atas[i % WALLETS], payer.publicKey, amounts[i], 6),
        );
        tx.sign(payer);
        await connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      }
    }
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    const sent = (performance.now() - t0) / 1000;
    const count = async () =>
      (await pool.query(`SELECT count(*)::int AS n FROM receipts WHERE cluster = $1`, [CLUSTER])).rows[0].n as number;
    await until(`${K} receipts in the ledger`, async () => (await count()) >= K, {
      timeoutMs: 300_000,
      intervalMs: 20,
    });
    const elapsed = (performance.now() - t0) / 1000;

    const { rows } = await pool.query(
      `SELECT sum(credited_amount)::text AS credited FROM invoices WHERE id LIKE 'S-%'`,
    );
    const expected = amounts.reduce((a, b) => a + b, 0n);
    if (BigInt(rows[0].credited) !== expected || (await count()) !== K)
      throw new OncepayError(
        BENCH_CODES.CHECK_FAILED,
        `credited ${rows[0].credited}, expected ${expected}; receipts ${await count()}, sent ${K}`,
      );
    child.kill('SIGTERM');
    await exited;
    child = undefined;
    console.log(
      `stream source end to end (localnet geyser, ${SLOT_MS} ms slots, finality ${DEPTH} slots deep, ${K} transfers to ${WALLETS} watched accounts; machine ${machineLabel()}):`,
    );
    console.log(
      `  ${Math.round(K / elapsed).toLocaleString('en')} receipts/s first send → last receipt in the ledger (${elapsed.toFixed(2)} s; the sends alone ${sent.toFixed(2)} s = ${Math.round(K / sent).toLocaleString('en')} tx/s; credited total exact)`,
    );
  } finally {
    child?.kill('SIGKILL');
    await net.stop();
    await db.drop();
  }
}

leavingServerAsFound(main).catch((e) => {
  console.error(e);
  process.exit(1);
});
