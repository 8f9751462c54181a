// `oncepay indexer stream --grpc URL | --ws URL`: the subscription sources — Yellowstone gRPC (stream.ts, source
// 'stream') or a plain RPC node's websocket logsSubscribe (ws-source.ts, source 'ws') — wired to the real clients,
// the ledger and the metrics. The x-token comes from a file or the environment (never needed on the command line).
import { Command, Option } from 'commander';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import { DEFAULT_RETRY } from '../indexer/rpc/backoff';
import { createProvisionalStore } from '../indexer/source/provisional';
import {
  DEFAULT_STREAM,
  GeyserClient,
  pickSubscription,
  STREAM_SOURCE,
  xTokenOf,
} from '../indexer/source/stream-options';
import { watchedAddresses } from '../indexer/source/watched';
import { serveMetricsIfAsked, sourceRpc, wireLedger, WiredLedger } from '../indexer/source/wire';
import { DEFAULT_WS, rpcUrlOfWs, WS_SOURCE } from '../indexer/source/ws-plan';
import { intOption, rpcOption, urlArg } from './options';

interface StreamCliOptions {
  grpc?: string;
  ws?: string;
  rpc?: string;
  rpcTimeoutMs: number;
  rpcAttempts: number;
  xTokenFile?: string;
  xToken?: string;
  cluster: string;
  commitment: 'finalized' | 'confirmed';
  fromSlot?: number;
  pingMs: number;
  idleTimeoutMs: number;
  refreshMs: number;
  metricsPort?: number;
}

/** Where the subscription comes from: --grpc (and its x-token) or --ws (and its JSON-RPC endpoint). */
function endpointOptions(c: Command): Command {
  return c
    .option(
      '--grpc <url>',
      'Yellowstone gRPC endpoint, e.g. https://host:443 (env ONCEPAY_GRPC_URL)',
      urlArg('--grpc', ['http:', 'https:']),
      process.env.ONCEPAY_GRPC_URL,
    )
    .option(
      '--ws <url>',
      "instead of --grpc: the node's websocket endpoint, e.g. wss://host (env ONCEPAY_WS_URL)",
      urlArg('--ws', ['ws:', 'wss:']),
      process.env.ONCEPAY_WS_URL,
    )
    .addOption(
      rpcOption({
        description:
          'with --ws: the JSON-RPC endpoint getTransaction and the catch-up are asked (default: the --ws URL as http(s))',
      }),
    )
    .option(
      '--rpc-timeout-ms <ms>',
      'with --ws: deadline of one RPC attempt',
      intOption('--rpc-timeout-ms', 1),
      DEFAULT_RETRY.timeoutMs,
    )
    .option(
      '--rpc-attempts <n>',
      'with --ws: attempts per RPC call (retries on 429, 5xx, timeouts, network errors)',
      intOption('--rpc-attempts', 1),
      DEFAULT_RETRY.attempts,
    )
    .option('--x-token-file <path>', 'file holding the x-token; or env ONCEPAY_GRPC_X_TOKEN')
    .option('--x-token <token>', 'the x-token on the command line (visible in `ps`: prefer --x-token-file or the env)');
}

export function registerStream(indexer: Command): void {
  endpointOptions(
    indexer
      .command('stream')
      .description(
        'subscribe to the watched deposit accounts and feed the ledger from finalized transactions: a Yellowstone gRPC (Geyser) endpoint (source "stream") or a plain RPC node\'s websocket logsSubscribe + getTransaction (source "ws")',
      ),
  )
    .option(
      '--cluster <name>',
      'cluster name, part of every receipt key (env ONCEPAY_CLUSTER)',
      process.env.ONCEPAY_CLUSTER ?? 'localnet',
    )
    .addOption(
      new Option(
        '--commitment <level>',
        'finalized: the ledger from finalized slots. confirmed: the same, plus provisional_receipts as transactions are confirmed (never credited; with --ws a second subscription per address), settled once final',
      )
        .choices(['finalized', 'confirmed'])
        .default('finalized'),
    )
    .option(
      '--from-slot <slot>',
      'first slot when there is no (cluster, stream|ws) checkpoint yet (default: live from now)',
      intOption('--from-slot'),
    )
    .option(
      '--ping-ms <ms>',
      'keep-alive ping interval (gRPC ping message / websocket ping frame)',
      intOption('--ping-ms', 1),
      DEFAULT_STREAM.pingMs,
    )
    .option(
      '--idle-timeout-ms <ms>',
      'reconnect when nothing arrived for this long',
      intOption('--idle-timeout-ms', 1),
      DEFAULT_STREAM.idleTimeoutMs,
    )
    .option(
      '--refresh-ms <ms>',
      'how often the watched addresses are read again',
      intOption('--refresh-ms', 1),
      DEFAULT_STREAM.refreshMs,
    )
    .option(
      '--metrics-port <port>',
      'serve Prometheus /metrics on 127.0.0.1:<port> (0 = any free port)',
      intOption('--metrics-port'),
    )
    .addHelpText(
      'after',
      '\n--grpc: reconnects with backoff and jitter, resuming with from_slot at its own checkpoint.' +
        '\n--ws: one logsSubscribe (mentions) per watched address; after each (re)connect it catches up with getSignaturesForAddress from a margin below its (cluster, ws) checkpoint, then follows the notifications.' +
        '\nPrints its counters as JSON on exit.',
    )
    .addHelpText('after', shutdownHelp(undefined, 'ends the stream, finishes the ledger batch in flight'))
    .action(stream);
}

/** `indexer stream`: the gRPC source (or, with --ws, the websocket one) until SIGTERM. */
async function stream(o: StreamCliOptions, cmd: Command): Promise<void> {
  const grpcFromEnv = cmd.getOptionValueSource('grpc') === 'default';
  if (pickSubscription(o, grpcFromEnv) === 'ws') return runWs({ ...o, ws: o.ws! });
  const grpc = o.grpc!;
  const xToken = xTokenOf(o);
  const w = wireLedger('stream', 'indexer-stream');
  if (o.xToken !== undefined && o.xTokenFile === undefined && !process.env.ONCEPAY_GRPC_X_TOKEN)
    w.log.warn('--x-token is visible to every user of this machine (ps); use --x-token-file or ONCEPAY_GRPC_X_TOKEN');
  await runUntilStopped(w, o, { grpc, source: STREAM_SOURCE }, async () => {
    // Loaded here, not at the top: `oncepay --help` need not load the native client.
    const { default: Client } = await import('@triton-one/yellowstone-grpc');
    const { createStreamSource } = await import('../indexer/source/stream');
    return createStreamSource(
      { ...commonDeps(w, o), client: () => new Client(grpc, xToken, undefined) as unknown as GeyserClient },
      { ...DEFAULT_STREAM, ...commonOptions(o) },
    );
  });
}

/** The ledger, watched addresses, provisional store, log and metrics both sources take. */
function commonDeps(w: WiredLedger, o: StreamCliOptions) {
  return {
    ledger: w.ledger,
    watched: () => watchedAddresses(w.pool),
    provisional: o.commitment === 'confirmed' ? createProvisionalStore(w.pool) : undefined,
    log: w.log,
    metrics: w.metrics,
  };
}

function commonOptions(o: StreamCliOptions) {
  const { cluster, commitment, fromSlot, pingMs, idleTimeoutMs, refreshMs } = o;
  return { cluster, commitment, fromSlot, pingMs, idleTimeoutMs, refreshMs };
}

/** The source `make` builds, run until SIGTERM (with --metrics-port's server); its counters printed as JSON. */
async function runUntilStopped(
  w: WiredLedger,
  o: StreamCliOptions,
  describe: Record<string, unknown>,
  make: () => Promise<{ run(x: { signal: AbortSignal }): Promise<object> }>,
): Promise<void> {
  const stop = onStopSignals(w.log);
  try {
    const server = await serveMetricsIfAsked(w, o.metricsPort);
    try {
      const source = await make();
      w.log.info({ ...describe, cluster: o.cluster, commitment: o.commitment }, 'subscription starting');
      const stats = await source.run({ signal: stop.signal });
      process.stdout.write(`${JSON.stringify({ cluster: o.cluster, ...stats })}\n`);
    } finally {
      await server?.close();
    }
  } finally {
    stop.dispose();
    await w.pool.end();
  }
}

/** `indexer stream --ws URL`: the websocket source until SIGTERM, then its counters as JSON. */
async function runWs(o: StreamCliOptions & { ws: string }): Promise<void> {
  const rpcUrl = o.rpc ?? rpcUrlOfWs(o.ws);
  const w = wireLedger('ws', 'indexer-stream-ws');
  await runUntilStopped(w, o, { ws: o.ws, rpc: rpcUrl, source: WS_SOURCE }, async () => {
    const { createWsSource } = await import('../indexer/source/ws-source');
    const rpc = sourceRpc({ rpc: rpcUrl, rpcTimeoutMs: o.rpcTimeoutMs, rpcAttempts: o.rpcAttempts }, w);
    return createWsSource({ ...commonDeps(w, o), url: o.ws, rpc }, { ...DEFAULT_WS, ...commonOptions(o) });
  });
}
