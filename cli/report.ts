// `oncepay report`: the ledger's totals (indexer/report.ts formats them for a terminal; --json is the stable format).
import { Command } from 'commander';
import { withPoolFromEnv } from '../db/pool';
import { exceptionStates } from '../app/exception/store';
import { createLedger } from '../indexer/ledger';
import { formatReport } from '../indexer/report';
import { withSchemaHint } from './schema-hint';

export function register(program: Command): void {
  program
    .command('report')
    .description(
      'ledger totals: per invoice (expected, credited, status), receipts, duplicates per source, exceptions by kind, outbox states',
    )
    .option('--json', 'print JSON (the stable format)')
    .action(
      withSchemaHint(async (o: { json?: boolean }) => {
        await withPoolFromEnv({ max: 6 }, async (db) => {
          const r = { ...(await createLedger({ db }).report()), exceptionStates: await exceptionStates(db) };
          process.stdout.write(o.json ? `${JSON.stringify(r)}\n` : formatReport(r));
        });
      }),
    );
}
