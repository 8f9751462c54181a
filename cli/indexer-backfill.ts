// `oncepay indexer backfill`: a slot range read through the scanner's path (indexer/source/backfill.ts).
import { Command } from 'commander';
import { OncepayError } from '../common/errors';
import { SOURCE_CODES } from '../common/errors/codes';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import { BackfillProgress, runBackfill } from '../indexer/source/backfill';
import { wireSource } from '../indexer/source/wire';
import { intOption } from './options';
import { progress } from './progress';
import { assertFinalized, blockReadOptions, commitmentOption, RpcOpts, withRpcOptions } from './source-options';

type BackfillOpts = RpcOpts & {
  fromSlot: number;
  toSlot: number;
  commitment: string;
  chunkSize: number;
  concurrency: number;
  listSpan: number;
};

export function registerBackfill(indexer: Command): void {
  blockReadOptions(
    withRpcOptions(
      indexer
        .command('backfill')
        .description(
          'read a slot range through the same path as the scanner (source "backfill"); safe beside a running scanner',
        ),
    )
      .requiredOption('--from-slot <slot>', 'first slot (inclusive)', intOption('--from-slot'))
      .requiredOption('--to-slot <slot>', 'last slot (inclusive)', intOption('--to-slot'))
      .addOption(commitmentOption()),
  )
    .option('--list-span <slots>', 'slots per getBlocks call', intOption('--list-span', 1), 5000)
    .addHelpText(
      'after',
      '\nPrints a JSON summary; after a stop it carries interrupted.resumeFromSlot (run again from there).',
    )
    .addHelpText('after', shutdownHelp(undefined, 'finishes the ledger batch in flight and stops'))
    .action(backfill);
}

/** `indexer backfill`: the range read once through the scanner's path; its summary as JSON. */
async function backfill(o: BackfillOpts): Promise<void> {
  assertFinalized(o.commitment, 'backfill reads finalized blocks only (--commitment confirmed is for `indexer run`)');
  const w = wireSource(o, 'backfill', 'indexer-backfill');
  const stop = onStopSignals(w.log);
  const bar = progress<BackfillProgress>({
    msg: 'backfill progress',
    format:
      'backfill [{bar}] {value}/{total} slots | {blocks} blocks | {inserted} new | {duplicates} dup | {failed} failed',
    start: { done: 0, total: o.toSlot - o.fromSlot + 1, blocks: 0, receipts: 0, inserted: 0, duplicates: 0, failed: 0 },
  });
  try {
    const r = await runBackfill(
      {
        rpc: w.rpc,
        ledger: w.ledger,
        decode: w.decode,
        log: w.log,
        metrics: w.metrics,
        onProgress: (p) => bar.update(p),
      },
      {
        cluster: o.cluster,
        fromSlot: o.fromSlot,
        toSlot: o.toSlot,
        commitment: 'finalized',
        listSpan: o.listSpan,
        chunkSize: o.chunkSize,
        concurrency: o.concurrency,
      },
      stop.signal,
    );
    bar.stop();
    process.stdout.write(`${JSON.stringify(r)}\n`);
    if (r.failures.length > 0) {
      throw new OncepayError(
        SOURCE_CODES.BACKFILL_INCOMPLETE,
        `${r.failures.length} slot(s) could not be processed; run the backfill again for them`,
        {
          slots: r.failures.map((f) => f.slot),
        },
      );
    }
  } finally {
    bar.stop();
    stop.dispose();
    await w.pool.end();
  }
}
