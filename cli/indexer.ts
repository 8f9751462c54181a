// `oncepay indexer run | backfill | webhook | stream`: the receipts indexer's sources, one file each.
import { Command } from 'commander';
import { registerBackfill } from './indexer-backfill';
import { registerRun } from './indexer-run';
import { registerStream } from './indexer-stream';
import { registerWebhook } from './indexer-webhook';

export function register(program: Command): void {
  const indexer = program.command('indexer').description('the receipts indexer');
  for (const add of [registerRun, registerBackfill, registerWebhook, registerStream]) add(indexer);
}
