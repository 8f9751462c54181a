// `oncepay payout serve | worker`: the long-running payout processes (the merchant API, the worker pool), until
// SIGTERM drains them.
import { Command } from 'commander';
import { register as metricsRegistry } from 'prom-client';
import { OncepayError } from '../common/errors';
import { PAYOUT_CODES } from '../common/errors/codes';
import { logger } from '../common/log';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import { createPoolFromEnv } from '../db/pool';
import { serveMetrics } from '../indexer/metrics';
import { startPayoutWorker } from '../app/payout/worker';
import { mintDecimalsFromChain } from '../app/invoice/mint-decimals-rpc';
import { Connection } from '@solana/web3.js';
import { urlCarriesSecret } from '../common/redact';
import { clusterOption, intOption, keypairFilesArg, rpcOption, urlArg } from './options';
import {
  AUTHORITY_HELP,
  ChainOpts,
  EXIT_MARGIN_MS,
  WorkerFlags,
  workerFlagOptions,
  workerOptions,
} from './payout-options';

/**
 * `payout serve` runs a worker pool when given --authority, on the endpoint of --rpc or ONCEPAY_RPC_URL. A --rpc
 * typed without --authority is refused; ONCEPAY_RPC_URL alone, set for the other commands, leaves it an API only.
 */
export function serveWorkerRpc(
  rpc: string | undefined,
  authority: string | undefined,
  rpcSource: string | undefined,
): string | undefined {
  if (authority ? !rpc : rpcSource === 'cli')
    throw new OncepayError(PAYOUT_CODES.OPTION_INVALID, '--rpc and --authority go together');
  return authority ? rpc : undefined;
}

type ServeOpts = {
  host: string;
  port: number;
  rpc?: string;
  authority?: string[];
  payer?: string;
  pollMs: number;
  commitment: string;
  console: boolean;
  cluster: string;
  explorer?: string;
  publicUrl?: string;
} & WorkerFlags;

export function registerServe(payout: Command): void {
  workerFlagOptions(
    payout
      .command('serve')
      .description(
        'serve the merchant API (POST /v1/payouts stores, GET /v1/payouts/:id, /openapi.json, /metrics); with --rpc and --authority ' +
          'it also runs a payout worker pool in the same process (as `oncepay payout worker`, with its own connections). On ' +
          'SIGTERM/SIGINT it stops accepting, drains the pool and exits 0 within --drain-ms + 5 s',
      )
      .option('--host <host>', 'listen address', '127.0.0.1')
      .option('--port <port>', 'port (0: any free port)', intOption('--port'), 8080)
      .addOption(rpcOption({ description: 'Solana JSON-RPC endpoint: run a payout worker pool in this process' }))
      .option('--authority <path>', `with --rpc: ${AUTHORITY_HELP}`, keypairFilesArg('--authority'))
      .option('--no-console', 'do not serve the operator console at /console/')
      .addOption(clusterOption('the cluster the console links explorer pages for'))
      .option(
        '--explorer <template>',
        'explorer link template for the console, e.g. http://127.0.0.1:3000/{kind}/{id} ({kind}: tx|address); default Solana Explorer',
        urlArg('--explorer', ['http:', 'https:']),
      )
      .option(
        '--public-url <url>',
        "where payers reach this API (e.g. https://pay.example.com): invoices' checkout links are absolute; without it, a path",
        urlArg('--public-url', ['http:', 'https:']),
      ),
  )
    .addHelpText(
      'after',
      '\nThe operator console: /console/ (log in as an operator added with `oncepay operator add`).',
    )
    .addHelpText(
      'after',
      '\nGET /healthz (alive) and GET /readyz (database reachable, migrations applied). While the database is away requests get 503 + Retry-After ({code: "DATABASE_UNAVAILABLE"}).',
    )
    .addHelpText(
      'after',
      shutdownHelp(
        '--drain-ms + 5 s',
        'stops accepting, answers the requests in flight, drains the worker pool (payouts in flight get --drain-ms, then are handed back)',
      ),
    )
    .action(serve);
}

async function serve(o: ServeOpts, cmd: Command): Promise<void> {
  // Loaded here: fastify + swagger are only needed by this command (keeps the other commands quick to start).
  const { buildApiApp } = await import('../app/api/build-api-app');
  const log = logger('api');
  const rpc = serveWorkerRpc(o.rpc, o.authority?.[0], cmd.getOptionValueSource('rpc'));
  const stopping = onStopSignals(log, o.drainMs + EXIT_MARGIN_MS); // first: a SIGTERM at any point drains
  const db = createPoolFromEnv({ name: 'payout-serve' });
  // The pool has its own connections: API requests and payouts in flight never wait for each other's.
  const execDb = rpc ? createPoolFromEnv({ max: o.concurrency + 1, name: 'payout-worker' }) : undefined;
  const worker = execDb
    ? startPayoutWorker(workerOptions(execDb, { ...o, rpc: rpc!, authority: o.authority! }))
    : undefined;
  // With --rpc, a new invoice's mint has its decimals read from the chain (once per mint).
  const readMintDecimals = o.rpc ? mintDecimalsFromChain(new Connection(o.rpc, 'finalized')) : undefined;
  const app = await buildApiApp({
    db,
    console: o.console ? consoleOptions(o, rpc) : undefined,
    invoices: { readMintDecimals, publicUrl: o.publicUrl },
  });
  const url = await app.listen({ host: o.host, port: o.port });
  log.info({ url, executes: !!worker }, 'merchant API listening');
  process.stdout.write(`${JSON.stringify({ url, ...(o.console ? { console: `${url}/console/` } : {}) })}\n`);
  await stopping.stopped;
  await app.close();
  await worker?.stop({ graceMs: o.drainMs });
  await Promise.all([db.end(), execDb?.end()]);
  process.exit(0);
}

/**
 * The console's options in `payout serve`: explorer links for --cluster (a custom cluster's RPC is passed to the
 * explorer only when its URL carries no credential), and the chain tip for the checkpoint lag when --rpc is given.
 */
function consoleOptions(o: { cluster: string; explorer?: string }, rpc: string | undefined) {
  const chain = rpc ? new Connection(rpc, 'finalized') : undefined;
  return {
    explorer: { cluster: o.cluster, template: o.explorer, rpcUrl: rpc && !urlCarriesSecret(rpc) ? rpc : undefined },
    chainTip: chain ? async () => BigInt(await chain.getSlot('finalized')) : undefined,
  };
}

type WorkerOpts = Omit<ChainOpts, 'timeoutMs'> & WorkerFlags & { metricsPort?: number };

export function registerWorker(payout: Command): void {
  workerFlagOptions(
    payout
      .command('worker')
      .description(
        'execute due payouts with a bounded pool: each slot claims one payout (FOR UPDATE SKIP LOCKED + its advisory lock) and runs ' +
          'the journal on that same connection; chain trouble hands a payout back with a durable backoff; any number of workers may ' +
          'share a database. It claims only the payouts of the registered merchants whose payout authority (read from their merchant ' +
          'config on chain at start, every --merchants-refresh-ms and after a refusal) is one of the --authority keys, and logs them ' +
          '("payout worker merchants"); a payout refused on chain as Unauthorized (the authority was rotated) is handed back, never ' +
          'failed. On SIGTERM/SIGINT: no new claims, in-flight payouts get --drain-ms to finish, the rest are handed back ' +
          '(an attempt already sent is resolved by the next claim), exit 0 within --drain-ms + 5 s',
      )
      .addOption(rpcOption({ required: true }))
      .requiredOption('--authority <path>', AUTHORITY_HELP, keypairFilesArg('--authority')),
  )
    .option(
      '--metrics-port <port>',
      'serve Prometheus /metrics, /healthz and /readyz on 127.0.0.1:<port> (0 = any free port)',
      intOption('--metrics-port'),
    )
    .addHelpText(
      'after',
      shutdownHelp(
        '--drain-ms + 5 s',
        'stops claiming; payouts in flight get --drain-ms to finish, then are handed back and their open attempts logged',
      ),
    )
    .action(work);
}

async function work(o: WorkerOpts): Promise<void> {
  const log = logger('payout-worker');
  const stopping = onStopSignals(log, o.drainMs + EXIT_MARGIN_MS); // first: a SIGTERM at any point drains
  const db = createPoolFromEnv({ max: o.concurrency + 1, name: 'payout-worker' });
  const worker = startPayoutWorker(workerOptions(db, o));
  const server =
    o.metricsPort === undefined
      ? undefined
      : await serveMetrics({ port: o.metricsPort, registry: metricsRegistry, db });
  if (server) log.info({ url: server.url }, 'serving metrics');
  await stopping.stopped;
  const report = await worker.stop({ graceMs: o.drainMs });
  await server?.close();
  await db.end();
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}
