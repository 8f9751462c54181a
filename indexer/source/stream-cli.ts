// `oncepay indexer stream --grpc URL`: the Yellowstone gRPC subscription source, wired to the real client, the
// ledger and the metrics. The x-token comes from a file or the environment (never needed on the command line).
import * as fs from 'fs';
import { getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { Command, Option } from 'commander';
import type { Pool } from 'pg';
import { intOption } from '../../common/cli-options';
import { OncepayError } from '../../common/errors';
import { onStopSignals, shutdownHelp } from '../../common/shutdown';
import { serveMetricsIfAsked, wireLedger } from './cli';
import { SOURCE_CODES } from '../../common/errors/codes';
import { createProvisionalStore } from './provisional';
import { DEFAULT_STREAM, GeyserClient, STREAM_SOURCE } from './stream-options';

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

export function registerStream(program: Command): void {
  const indexer =
    program.commands.find((c) => c.name() === 'indexer') ??
    program.command('indexer').description('the receipts indexer');
  indexer
    .command('stream')
    .description(
      'subscribe to a Yellowstone gRPC (Geyser) endpoint, filtered to the watched deposit accounts, and feed the ledger from finalized slots (source "stream")',
    )
    .requiredOption(
      '--grpc <url>',
      'Yellowstone gRPC endpoint, e.g. https://host:443 (env ONCEPAY_GRPC_URL)',
      process.env.ONCEPAY_GRPC_URL,
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
        'finalized: the ledger from finalized slots. confirmed: the same, plus provisional_receipts as transactions are confirmed (never credited), settled once final',
      )
        .choices(['finalized', 'confirmed'])
        .default('finalized'),
    )
    .option(
      '--from-slot <slot>',
      'first slot when there is no (cluster, stream) checkpoint yet (default: live from now)',
      intOption('--from-slot'),
    )
    .option('--ping-ms <ms>', 'keep-alive ping interval', intOption('--ping-ms', 1), DEFAULT_STREAM.pingMs)
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
      '\nReconnects with backoff and jitter, resuming with from_slot at its own checkpoint. Prints its counters as JSON on exit.',
    )
    .addHelpText('after', shutdownHelp(undefined, 'ends the stream, finishes the ledger batch in flight'))
    .action(
      async (o: {
        grpc: string;
        xTokenFile?: string;
        xToken?: string;
        cluster: string;
        commitment: 'finalized' | 'confirmed';
        fromSlot?: number;
        pingMs: number;
        idleTimeoutMs: number;
        refreshMs: number;
        metricsPort?: number;
      }) => {
        const xToken = xTokenOf(o);
        const w = wireLedger('stream', 'indexer-stream');
        if (o.xToken !== undefined && o.xTokenFile === undefined && !process.env.ONCEPAY_GRPC_X_TOKEN)
          w.log.warn(
            '--x-token is visible to every user of this machine (ps); use --x-token-file or ONCEPAY_GRPC_X_TOKEN',
          );
        const stop = onStopSignals(w.log);
        const server = await serveMetricsIfAsked(w, o.metricsPort);
        // Loaded here, not at the top: `oncepay --help` need not load the native client.
        const { default: Client } = await import('@triton-one/yellowstone-grpc');
        const { createStreamSource } = await import('./stream');
        try {
          const source = createStreamSource(
            {
              client: () => new Client(o.grpc, xToken, undefined) as unknown as GeyserClient,
              ledger: w.ledger,
              watched: () => watchedAddresses(w.pool),
              provisional: o.commitment === 'confirmed' ? createProvisionalStore(w.pool) : undefined,
              log: w.log,
              metrics: w.metrics,
            },
            {
              ...DEFAULT_STREAM,
              cluster: o.cluster,
              commitment: o.commitment,
              fromSlot: o.fromSlot,
              pingMs: o.pingMs,
              idleTimeoutMs: o.idleTimeoutMs,
              refreshMs: o.refreshMs,
            },
          );
          w.log.info(
            { grpc: o.grpc, cluster: o.cluster, commitment: o.commitment, source: STREAM_SOURCE },
            'stream starting',
          );
          const stats = await source.run({ signal: stop.signal });
          process.stdout.write(`${JSON.stringify({ cluster: o.cluster, ...stats })}\n`);
        } finally {
          stop.dispose();
          await server?.close();
          await w.pool.end();
        }
      },
    );
}
