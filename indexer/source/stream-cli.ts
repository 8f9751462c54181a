// `oncepay indexer stream --grpc URL | --ws URL`: the subscription sources — Yellowstone gRPC (stream.ts, source
// 'stream') or a plain RPC node's websocket logsSubscribe (ws-source.ts, source 'ws') — wired to the real clients,
// the ledger and the metrics. The x-token comes from a file or the environment (never needed on the command line).
import * as fs from 'fs';
import { getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { Command, Option } from 'commander';
import type { Pool } from 'pg';
import { intOption, rpcOption, urlArg } from '../../common/cli-options';
import { OncepayError } from '../../common/errors';
import { onStopSignals, shutdownHelp } from '../../common/shutdown';
import { DEFAULT_RETRY } from '../rpc/backoff';
import { serveMetricsIfAsked, sourceRpc, wireLedger } from './cli';
import { SOURCE_CODES } from '../../common/errors/codes';
import { createProvisionalStore } from './provisional';
import { DEFAULT_STREAM, GeyserClient, STREAM_SOURCE } from './stream-options';
import { DEFAULT_WS, rpcUrlOfWs, WS_SOURCE } from './ws-plan';

/**
 * The addresses the stream filters on: each open invoice's deposit address, its associated token accounts for the
 * invoice's mint under both token programs (a deposit address may be the owner wallet), and its reference key.
 * A transfer into another token account of an owner is not seen by the stream; the scanner still finds it.
 */
export async function watchedAddresses(db: Pick<Pool, 'query'>): Promise<string[]> {
  const { rows } = await db.query<{ mint: string; deposit_address: string | null; reference_key: string | null }>(
    `SELECT mint, deposit_address, reference_key FROM invoices WHERE status = 'open'`,
  );
  const out = new Set<string>();
  for (const r of rows) {
    if (r.reference_key) out.add(r.reference_key);
    if (!r.deposit_address) continue;
    out.add(r.deposit_address);
    if (r.mint === 'SOL') continue;
    try {
      const owner = new PublicKey(r.deposit_address);
      const mint = new PublicKey(r.mint);
      for (const program of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID])
        out.add(getAssociatedTokenAddressSync(mint, owner, true, program).toBase58());
    } catch {
      // not an address (the ledger validates invoices); nothing to derive
    }
  }
  return [...out];
}

/** --x-token-file, else ONCEPAY_GRPC_X_TOKEN, else --x-token (visible in ps), else none. */
export function xTokenOf(o: { xTokenFile?: string; xToken?: string }): string | undefined {
  if (o.xTokenFile !== undefined) {
    const t = fs.readFileSync(o.xTokenFile, 'utf8').trim();
    if (t === '') throw new OncepayError(SOURCE_CODES.INVALID_OPTION, `${o.xTokenFile} is empty`);
    return t;
  }
  return process.env.ONCEPAY_GRPC_X_TOKEN || o.xToken || undefined;
}

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

/** Exactly one of --grpc / --ws (a --grpc from ONCEPAY_GRPC_URL gives way to an explicit --ws). */
export function pickSubscription(o: Pick<StreamCliOptions, 'grpc' | 'ws'>, grpcFromEnv: boolean): 'grpc' | 'ws' {
  if (o.ws !== undefined && o.grpc !== undefined && !grpcFromEnv)
    throw new OncepayError(SOURCE_CODES.INVALID_OPTION, '--grpc and --ws are two sources: run one process for each');
  if (o.ws !== undefined) return 'ws';
  if (o.grpc !== undefined) return 'grpc';
  throw new OncepayError(SOURCE_CODES.INVALID_OPTION, 'one of --grpc <url> or --ws <url> is required');
}

export function registerStream(program: Command): void {
  const indexer =
    program.commands.find((c) => c.name() === 'indexer') ??
    program.command('indexer').description('the receipts indexer');
  indexer
    .command('stream')
    .description(
      'subscribe to the watched deposit accounts and feed the ledger from finalized transactions: a Yellowstone gRPC (Geyser) endpoint (source "stream") or a plain RPC node\'s websocket logsSubscribe + getTransaction (source "ws")',
    )
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
    .option('--x-token <token>', 'the x-token on the command line (visible in `ps`: prefer --x-token-file or the env)')
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
    .action(async (o: StreamCliOptions, cmd: Command) => {
      const grpcFromEnv = cmd.getOptionValueSource('grpc') === 'default';
      if (pickSubscription(o, grpcFromEnv) === 'ws') return runWs({ ...o, ws: o.ws! });
      const grpc = o.grpc!;
      const xToken = xTokenOf(o);
      const w = wireLedger('stream', 'indexer-stream');
      if (o.xToken !== undefined && o.xTokenFile === undefined && !process.env.ONCEPAY_GRPC_X_TOKEN)
        w.log.warn(
          '--x-token is visible to every user of this machine (ps); use --x-token-file or ONCEPAY_GRPC_X_TOKEN',
        );
      await runUntilStopped(w, o, { grpc, source: STREAM_SOURCE }, async () => {
        // Loaded here, not at the top: `oncepay --help` need not load the native client.
        const { default: Client } = await import('@triton-one/yellowstone-grpc');
        const { createStreamSource } = await import('./stream');
        return createStreamSource(
          { ...commonDeps(w, o), client: () => new Client(grpc, xToken, undefined) as unknown as GeyserClient },
          { ...DEFAULT_STREAM, ...commonOptions(o) },
        );
      });
    });
}

type Wired = ReturnType<typeof wireLedger>;

/** The ledger, watched addresses, provisional store, log and metrics both sources take. */
function commonDeps(w: Wired, o: StreamCliOptions) {
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
  w: Wired,
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
    const { createWsSource } = await import('./ws-source');
    const rpc = sourceRpc({ rpc: rpcUrl, rpcTimeoutMs: o.rpcTimeoutMs, rpcAttempts: o.rpcAttempts }, w);
    return createWsSource({ ...commonDeps(w, o), url: o.ws, rpc }, { ...DEFAULT_WS, ...commonOptions(o) });
  });
}
