// Act 2: every delivery path brings the same transfers again — the scanner and its re-scan window, a provider
// webhook redelivering (same event id, then the same transactions under another id), a backfill over the whole
// range — and a real indexer process is SIGKILLed between its inserts and COMMIT, then restarted.
import * as cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import { OncepayError } from '../common/errors';
import { decodeBlock } from '../indexer/decode';
import type { Ledger } from '../indexer/ledger';
import type { IndexerMetrics } from '../indexer/metrics';
import { createRpcClient, RpcClient } from '../indexer/rpc';
import { runBackfill } from '../indexer/source/backfill';
import { createSourceMetrics } from '../indexer/source/metrics';
import type { SourceMetrics } from '../indexer/source/ports';
import { createScanner } from '../indexer/source/scanner';
import { buildWebhookApp } from '../indexer/source/webhook';
import { signDelivery } from '../indexer/source/webhook-auth';
import { createChainVerifier } from '../indexer/source/webhook-verifier';
import type { LocalnetHandle } from '../localnet';
import { DECIMALS, pay, Payment, World } from './act1-merchant-and-payments';
import { runOncepay } from './child';
import { DEMO_CODES } from '../common/errors/codes';
import type { Teardown } from './infra';
import type { Narrator } from './narrator';
import { short, tokens } from './narrator';
import { waitFinalized } from '../testkit/cluster';

export const CLUSTER = 'localnet';
export const RESCAN_WINDOW = 400;
export const CRASH_FAILPOINT = 'ledger.after_insert_before_commit';

export interface WebhookDeliveryLog {
  eventId: string;
  signatures: string[];
  status: number;
  duplicateEvent: boolean;
  inserted: number;
  duplicates: number;
}

export interface CrashEvidence {
  failpoint: string;
  payment: string;
  killedBy: string | null;
  exitCode: number | null;
  receiptsAfterKill: number;
  checkpointBefore: string | null;
  checkpointAfterKill: string | null;
  restartExitCode: number | null;
  receiptsAfterRestart: number;
  checkpointAfterRestart: string | null;
}

export interface IndexingEvidence {
  webhookUrl: string;
  webhook: WebhookDeliveryLog[];
  scannerPasses: Array<{ range: string; inserted: number; duplicates: number }>;
  backfill: { from: number; to: number; blocks: number; inserted: number; duplicates: number; failed: number };
  crash: CrashEvidence;
  secondPayment: Payment;
}

async function receiptCount(db: Pool, signature: string): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM receipts WHERE signature = $1', [signature]);
  return rows[0].n;
}

async function checkpoint(db: Pool): Promise<string | null> {
  const { rows } = await db.query("SELECT slot::text FROM checkpoints WHERE cluster = $1 AND source = 'scanner'", [
    CLUSTER,
  ]);
  return rows[0]?.slot ?? null;
}

async function getTransaction(rpc: RpcClient, signature: string): Promise<unknown> {
  const tx = await rpc.call('getTransaction', [
    signature,
    { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 },
  ]);
  if (!tx)
    throw new OncepayError(DEMO_CODES.UNEXPECTED_ANSWER, `getTransaction ${signature} found nothing at finalized`);
  return tx;
}

export interface IndexingDeps {
  world: World;
  net: LocalnetHandle;
  db: Pool;
  dbEnv: Record<string, string>;
  ledger: Ledger;
  metrics: IndexerMetrics;
  log: Logger;
  say: Narrator;
  teardown: Teardown;
  trackChild: (pid: number | undefined, kill: () => void) => void;
  interactive: boolean;
}

/** What every scene shares: the demo's dependencies, one RPC client and the source metrics it counts into. */
interface Scene extends IndexingDeps {
  rpc: RpcClient;
  sourceMetrics: SourceMetrics;
  decode: (block: unknown, slot: number) => ReturnType<typeof decodeBlock>;
}

/** 2a. The scanner: one pass to the finalized tip, then a pass that re-reads its window below the checkpoint. */
async function scanTwice(s: Scene): Promise<IndexingEvidence['scannerPasses']> {
  const { rpc, ledger, decode, log, sourceMetrics } = s;
  const scanner = createScanner(
    { rpc, ledger, decode, log, metrics: sourceMetrics },
    {
      cluster: CLUSTER,
      commitment: 'finalized',
      rescanWindow: RESCAN_WINDOW,
      fromSlot: s.world.firstSlot,
      pollMs: 100,
      maxSlotsPerPass: 5000,
      chunkSize: 500,
      concurrency: 4,
    },
  );
  const scannerPasses: IndexingEvidence['scannerPasses'] = [];
  for (let i = 0; i < 2; i++) {
    const p = await scanner.runPass();
    scannerPasses.push({
      range: p.range ? `${p.range.start}..${p.range.end}` : '-',
      inserted: p.inserted,
      duplicates: p.duplicates,
    });
  }
  s.say.step(
    `scanner (finalized, re-scan window ${RESCAN_WINDOW} slots): pass 1 slots ${scannerPasses[0].range} → ${scannerPasses[0].inserted} new receipts; pass 2 slots ${scannerPasses[1].range} → ${scannerPasses[1].inserted} new, ${scannerPasses[1].duplicates} duplicates absorbed`,
  );
  return scannerPasses;
}

/** One signed POST of the given transactions to the webhook receiver, and what it answered. */
async function deliverWebhook(
  url: string,
  secret: string,
  d: { eventId: string; signatures: string[] },
  txs: Map<string, unknown>,
): Promise<WebhookDeliveryLog> {
  const payload = JSON.stringify({ transactions: d.signatures.map((s) => txs.get(s)) });
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-oncepay-signature': signDelivery(secret, payload, Math.floor(Date.now() / 1000)),
      'x-oncepay-event-id': d.eventId,
    },
    body: payload,
  });
  const body = (await res.json()) as { duplicate?: boolean; inserted?: number; duplicates?: number };
  return {
    eventId: d.eventId,
    signatures: d.signatures,
    status: res.status,
    duplicateEvent: body.duplicate === true,
    inserted: body.inserted ?? 0,
    duplicates: body.duplicates ?? 0,
  };
}

/** 2b. A provider-style webhook redelivers the same transactions over real HTTP; each one is a hint, checked
 * against the chain (getTransaction through the same RPC client) before anything is applied. */
async function redeliverByWebhook(s: Scene): Promise<{ webhookUrl: string; webhook: WebhookDeliveryLog[] }> {
  const { world, db, rpc, ledger, log } = s;
  const secret = 'demo-provider-secret';
  const verifier = createChainVerifier({ db, rpc, ledger, cluster: CLUSTER, log });
  const app = buildWebhookApp({ db, ledger, cluster: CLUSTER, secret, verifier, log, metrics: s.sourceMetrics });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  s.teardown.push('webhook receiver', () => app.close());
  const webhookUrl = `${address}/v1/webhooks/demo-provider`;
  const txs = new Map<string, unknown>();
  for (const p of world.payments) txs.set(p.signature, await getTransaction(rpc, p.signature));
  const deliveries: Array<{ eventId: string; signatures: string[] }> = [
    { eventId: 'evt-7001', signatures: world.payments.map((p) => p.signature) },
    { eventId: 'evt-7001', signatures: world.payments.map((p) => p.signature) },
    { eventId: 'evt-7002', signatures: [world.payments[world.payments.length - 1].signature] },
  ];
  const webhook: WebhookDeliveryLog[] = [];
  for (const d of deliveries) webhook.push(await deliverWebhook(webhookUrl, secret, d, txs));
  s.say.step(
    `webhook ${webhookUrl}: ${webhook.length} POSTs of the same transactions`,
    webhook
      .map(
        (w) =>
          `${w.eventId} → ${w.status}${w.duplicateEvent ? ' duplicate event' : `, ${w.inserted} new, ${w.duplicates} duplicate receipts`}`,
      )
      .join('; '),
  );
  return { webhookUrl, webhook };
}

/** 2c. A backfill over the whole finalized range, through the same fetch → decode → ledger path. */
async function backfillAll(s: Scene): Promise<IndexingEvidence['backfill']> {
  const { rpc, ledger, decode, log } = s;
  const to = await rpc.getSlot('finalized');
  // A progress bar only for a person at a terminal (never with --ci / --json).
  const bar = s.interactive
    ? new cliProgress.SingleBar(
        {
          stream: process.stdout,
          clearOnComplete: true,
          format: '    backfill [{bar}] {value}/{total} slots | {duplicates} duplicates',
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(to + 1, 0, { duplicates: 0 });
  let b;
  try {
    b = await runBackfill(
      {
        rpc,
        ledger,
        decode,
        log,
        metrics: s.sourceMetrics,
        onProgress: (p) => bar?.update(p.done, { duplicates: p.duplicates }),
      },
      {
        cluster: CLUSTER,
        fromSlot: 0,
        toSlot: to,
        commitment: 'finalized',
        listSpan: 5000,
        chunkSize: 50,
        concurrency: 4,
      },
    );
  } finally {
    bar?.stop();
  }
  s.say.step(
    `backfill slots 0..${to}: ${b.blocks} blocks read, ${b.inserted} new, ${b.duplicates} duplicates absorbed`,
  );
  return { from: 0, to, blocks: b.blocks, inserted: b.inserted, duplicates: b.duplicates, failed: b.failed };
}

/** 2d. Alice pays INV-1001 a second time; a real indexer process is killed (SIGKILL) in the batch that holds it,
 * then restarted. */
async function crashAndRestart(s: Scene): Promise<{ second: Payment; crash: CrashEvidence }> {
  const { world, db, say } = s;
  const second = await pay(world, 'alice pays INV-1001 again (a second real transfer)', world.customers.alice, [
    ['INV-1001', 12_500_000n],
  ]);
  say.step(`${second.label}: ${short(second.signature)} (slot ${second.slot}, ${tokens(12_500_000n, DECIMALS)})`);
  await waitFinalized(world.connection, second.slot);
  const args = [
    'indexer',
    'run',
    '--once',
    '--rpc',
    s.net.url,
    '--cluster',
    CLUSTER,
    '--rescan-window',
    String(RESCAN_WINDOW),
    '--chunk-size',
    '5000',
    '--max-slots-per-pass',
    '5000',
    '--poll-ms',
    '100',
  ];
  const checkpointBefore = await checkpoint(db);
  const killed = await runOncepay(args, { ...s.dbEnv, ONCEPAY_FAILPOINT: CRASH_FAILPOINT }, s.trackChild);
  const receiptsAfterKill = await receiptCount(db, second.signature);
  const checkpointAfterKill = await checkpoint(db);
  say.step(
    `\`oncepay indexer run\` (pid ${killed.pid}) with ONCEPAY_FAILPOINT=${CRASH_FAILPOINT}: ${killed.signal ? `killed by ${killed.signal}` : `exited ${killed.code}`} mid-batch`,
    `after the kill: ${receiptsAfterKill} receipt(s) of ${short(second.signature)} in the ledger, checkpoint ${checkpointAfterKill} (was ${checkpointBefore}) — nothing half-applied`,
  );
  const restarted = await runOncepay(args, s.dbEnv, s.trackChild);
  if (restarted.code !== 0) {
    throw new OncepayError(
      DEMO_CODES.CHILD_FAILED,
      `restarted indexer exited ${restarted.code} (${restarted.signal}): ${restarted.stderr.slice(-2000)}`,
    );
  }
  const receiptsAfterRestart = await receiptCount(db, second.signature);
  const checkpointAfterRestart = await checkpoint(db);
  say.step(
    `restarted (pid ${restarted.pid}): exit ${restarted.code}; ${receiptsAfterRestart} receipt of the second payment, checkpoint ${checkpointAfterRestart}`,
  );
  return {
    second,
    crash: {
      failpoint: CRASH_FAILPOINT,
      payment: second.signature,
      killedBy: killed.signal,
      exitCode: killed.code,
      receiptsAfterKill,
      checkpointBefore,
      checkpointAfterKill,
      restartExitCode: restarted.code,
      receiptsAfterRestart,
      checkpointAfterRestart,
    },
  };
}

export async function runIndexing(deps: IndexingDeps): Promise<IndexingEvidence> {
  const sourceMetrics = createSourceMetrics(deps.metrics);
  const rpc = createRpcClient({
    url: deps.net.url,
    retry: { attempts: 6, timeoutMs: 10_000 },
    onError: (kind) => sourceMetrics.countRpcError(kind),
  });
  const decode = (block: unknown, slot: number) => decodeBlock(block, { slot, cluster: CLUSTER });
  const scene: Scene = { ...deps, rpc, sourceMetrics, decode };
  const lastSlot = Math.max(...deps.world.payments.map((p) => p.slot));
  await waitFinalized(deps.world.connection, lastSlot);

  const scannerPasses = await scanTwice(scene);
  const { webhookUrl, webhook } = await redeliverByWebhook(scene);
  const backfill = await backfillAll(scene);
  const { second, crash } = await crashAndRestart(scene);
  return { webhookUrl, webhook, scannerPasses, backfill, secondPayment: second, crash };
}
