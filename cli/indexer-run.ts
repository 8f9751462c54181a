// `oncepay indexer run`: the scanner (indexer/source/scanner.ts) over JSON-RPC into the ledger, from its checkpoint.
import { Command } from 'commander';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import { isDatabaseUnavailable } from '../db/unavailable';
import { createProvisionalTracker } from '../indexer/source/provisional';
import { createScanner, DEFAULT_SCANNER } from '../indexer/source/scanner';
import { serveMetricsIfAsked, wireSource } from '../indexer/source/wire';
import { intOption } from './options';
import { blockReadOptions, commitmentOption, RpcOpts, withRpcOptions } from './source-options';

/** `indexer run --once` stopped below the tip at a slot it could not fetch or decode (the next run retries it). */
export const EXIT_STOPPED_AT_SLOT = 3;

type ScanOpts = RpcOpts & {
  commitment: string;
  rescanWindow: number;
  fromSlot?: number;
  pollMs: number;
  maxSlotsPerPass: number;
  chunkSize: number;
  concurrency: number;
  metricsPort?: number;
  once?: boolean;
};

export function registerRun(indexer: Command): void {
  blockReadOptions(
    withRpcOptions(
      indexer
        .command('run')
        .description('scan finalized slots over JSON-RPC into the ledger, from the (cluster, scanner) checkpoint'),
    )
      .addOption(
        commitmentOption(
          'finalized: the ledger is fed from finalized blocks. confirmed: the same, plus confirmed blocks above the checkpoint kept as provisional_receipts (never credited) and settled final / reversed once finalized',
        ),
      )
      .option(
        '--rescan-window <slots>',
        'slots below the checkpoint read again each pass',
        intOption('--rescan-window'),
        DEFAULT_SCANNER.rescanWindow,
      )
      .option(
        '--from-slot <slot>',
        'first slot when there is no checkpoint yet (default: tip − rescan window)',
        intOption('--from-slot'),
      )
      .option('--poll-ms <ms>', 'wait between passes once caught up', intOption('--poll-ms', 1), DEFAULT_SCANNER.pollMs)
      .option(
        '--max-slots-per-pass <n>',
        'new slots per pass',
        intOption('--max-slots-per-pass', 1),
        DEFAULT_SCANNER.maxSlotsPerPass,
      ),
  )
    .option(
      '--metrics-port <port>',
      'serve Prometheus /metrics on 127.0.0.1:<port> (0 = any free port)',
      intOption('--metrics-port'),
    )
    .option('--once', `run passes until caught up (or stopped by a slot: exit code ${EXIT_STOPPED_AT_SLOT}), then exit`)
    .addHelpText(
      'after',
      '\nPrints {cluster, checkpoint, target, stoppedAt} as JSON on exit. With --metrics-port also /healthz and /readyz.',
    )
    .addHelpText(
      'after',
      shutdownHelp(undefined, 'finishes the ledger batch in flight (the checkpoint moves with it) and stops'),
    )
    .action(scan);
}

/** `indexer run`: the scanner until caught up (--once) or SIGTERM; where it stopped, as JSON. */
async function scan(o: ScanOpts): Promise<void> {
  const w = wireSource(o, 'scanner', 'indexer-run');
  const stop = onStopSignals(w.log);
  const server = await serveMetricsIfAsked(w, o.metricsPort);
  try {
    const scanner = createScanner(
      {
        rpc: w.rpc,
        ledger: w.ledger,
        decode: w.decode,
        log: w.log,
        metrics: w.metrics,
        provisional:
          o.commitment === 'confirmed'
            ? createProvisionalTracker({
                db: w.pool,
                rpc: w.rpc,
                decode: w.decode,
                concurrency: o.concurrency,
                maxSlots: o.maxSlotsPerPass,
                log: w.log,
              })
            : undefined,
      },
      {
        cluster: o.cluster,
        commitment: o.commitment === 'confirmed' ? 'confirmed' : 'finalized',
        rescanWindow: o.rescanWindow,
        fromSlot: o.fromSlot,
        pollMs: o.pollMs,
        maxSlotsPerPass: o.maxSlotsPerPass,
        chunkSize: o.chunkSize,
        concurrency: o.concurrency,
      },
    );
    w.log.info({ rpc: o.rpc, cluster: o.cluster, rescanWindow: o.rescanWindow }, 'scanner starting');
    const last = await scanner.run({ signal: stop.signal, once: o.once });
    // Stopped while the database is away: the last pass's checkpoint is what was committed.
    const checkpoint = await w.ledger.getCheckpoint(o.cluster, 'scanner').catch((e) => {
      if (!isDatabaseUnavailable(e)) throw e;
      return last?.checkpointAfter == null ? null : BigInt(last.checkpointAfter);
    });
    process.stdout.write(
      `${JSON.stringify({ cluster: o.cluster, checkpoint: checkpoint === null ? null : checkpoint.toString(), target: last?.target ?? null, stoppedAt: last?.stoppedAt ?? null })}\n`,
    );
    // --once that ended below the tip because a slot could not be processed: say so in the exit code.
    if (o.once && last?.stoppedAt) process.exitCode = EXIT_STOPPED_AT_SLOT;
  } finally {
    stop.dispose();
    await server?.close();
    await w.pool.end();
  }
}
