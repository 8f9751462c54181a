// `oncepay decode` and `oncepay ingest`: getTransaction results (a file or stdin) decoded into receipts, printed or
// applied to the ledger (indexer/source/file.ts).
import * as fs from 'fs';
import { Command, Option } from 'commander';
import { logger } from '../common/log';
import { withPoolFromEnv } from '../db/pool';
import { receiptToJson } from '../indexer/decode';
import { createLedger, RECEIPT_SOURCES, type ReceiptSource } from '../indexer/ledger';
import { decodeInput, ingestReceipts } from '../indexer/source/file';
import { clusterOption, intOption } from './options';
import { withSchemaHint } from './schema-hint';

/** Exit code when some input was bad (the good part was still printed / applied). */
export const EXIT_BAD_INPUT = 2;

export function register(program: Command): void {
  registerDecode(program);
  registerIngest(program);
}

function readInput(file: string | undefined): string {
  return fs.readFileSync(file === undefined || file === '-' ? 0 : file, 'utf8');
}

function registerDecode(program: Command): void {
  program
    .command('decode')
    .description('decode getTransaction results (JSON, JSON array or JSON lines) into one JSON line per receipt')
    .argument('[file]', 'input file (stdin when absent or "-")')
    .option('--cluster <name>', 'cluster to tag receipts with')
    .addHelpText(
      'after',
      `\nMalformed input is reported on stderr as JSON with its code; good transactions are still printed; exit code ${EXIT_BAD_INPUT}.`,
    )
    .action((file: string | undefined, o: { cluster?: string }) => {
      const log = logger('decode');
      const decoded = decodeInput(readInput(file), { cluster: o.cluster });
      const out = decoded.receipts.map((r) => `${receiptToJson(r)}\n`).join('');
      process.stdout.write(out);
      for (const p of decoded.problems)
        log.error({ code: p.code, line: p.line, index: p.index, transaction: p.transaction }, p.message);
      if (decoded.problems.length > 0) process.exitCode = EXIT_BAD_INPUT;
    });
}

function registerIngest(program: Command): void {
  program
    .command('ingest')
    .description('apply getTransaction results (as for decode) to the ledger: a file-based backfill, safe to repeat')
    .argument('[file]', 'input file (stdin when absent or "-")')
    .addOption(clusterOption('cluster the transactions are from'))
    .addOption(
      new Option('--source <source>', 'delivery path to count them under')
        .choices([...RECEIPT_SOURCES])
        .default('file'),
    )
    .option('--batch-size <n>', 'receipts per ledger transaction', intOption('--batch-size', 1), 1000)
    .addHelpText(
      'after',
      `\nPrints a JSON summary. Bad transactions are reported on stderr with their code and skipped (exit code ${EXIT_BAD_INPUT}); the rest is applied.`,
    )
    .action(
      withSchemaHint(
        async (file: string | undefined, o: { cluster: string; source: ReceiptSource; batchSize: number }) => {
          const log = logger('ingest');
          const decoded = decodeInput(readInput(file), { cluster: o.cluster });
          for (const p of decoded.problems)
            log.error({ code: p.code, line: p.line, index: p.index, transaction: p.transaction }, p.message);
          // Two connections: the ledger's pipeline begins the next batch on the second while one commits.
          await withPoolFromEnv({ max: 2 }, async (db) => {
            const ledger = createLedger({ db, log });
            const { cluster, source, batchSize } = o;
            const summary = await ingestReceipts(ledger, decoded, { cluster, source, batchSize, log });
            process.stdout.write(`${JSON.stringify(summary)}\n`);
            if (summary.problems > 0 || summary.rejected > 0) process.exitCode = EXIT_BAD_INPUT;
          });
        },
      ),
    );
}
