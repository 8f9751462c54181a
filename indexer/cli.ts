// The indexer's commands: decode, ingest, invoice, report, outbox; the sources' `indexer run|backfill|webhook`
// come from indexer/source/cli.ts (one line in register()).
import * as fs from 'fs';
import { Command, Option } from 'commander';
import { baseUnits } from '../common/amount';
import { addressArg, amountArg, clusterOption, intOption, urlArg } from '../common/cli-options';
import { OncepayError } from '../common/errors';
import { OUTBOX_CODES } from '../common/errors/codes';
import { logger } from '../common/log';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import { createPoolFromEnv, withPoolFromEnv } from '../db/pool';
import { exec } from '../db/sql';
import { receiptToJson } from './decode';
import { createWebhookDelivery } from './delivery';
import { createLedger, LEDGER_CODES, RECEIPT_SOURCES, type ReceiptSource } from './ledger';
import { decodeInput, ingestReceipts } from './source/file';
import { createIndexerMetrics, serveMetrics } from './metrics';
import { formatReport } from './report';
import { exceptionStates } from '../app/exception/store';
import { createOutboxWorker, replayDeadLetters } from './outbox';
import { upsertWebhookEndpoint } from './outbox/queries';
import { registerSources } from './source/cli';
import { registerStream } from './source/stream-cli';

/** Exit code when some input was bad (the good part was still printed / applied). */
export const EXIT_BAD_INPUT = 2;

export function register(program: Command): void {
  registerDecode(program);
  registerIngest(program);
  registerInvoice(program);
  registerReport(program);
  registerOutbox(program);
  // Sources (scanner, backfill, webhook).
  registerSources(program);
  // The subscription source (Yellowstone gRPC).
  registerStream(program);
}

/** A command's action, with a missing schema (undefined table) turned into a code that says what to do. */
function withSchemaHint<A extends unknown[]>(action: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (e) {
      if ((e as { code?: string }).code === '42P01') {
        const schema = process.env.ONCEPAY_DB_SCHEMA;
        throw new OncepayError(
          LEDGER_CODES.SCHEMA_MISSING,
          `${(e as Error).message}: run \`oncepay migrate${schema ? ` --schema ${schema}` : ''}\` first`,
        );
      }
      throw e;
    }
  };
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
            const summary = await ingestReceipts(ledger, decoded, {
              cluster: o.cluster,
              source: o.source,
              batchSize: o.batchSize,
              log,
            });
            process.stdout.write(`${JSON.stringify(summary)}\n`);
            if (summary.problems > 0 || summary.rejected > 0) process.exitCode = EXIT_BAD_INPUT;
          });
        },
      ),
    );
}

/** A mint flag: a base58 address, or 'SOL' for native transfers. */
function mintArg(name: string): (v: string) => string {
  const address = addressArg(name);
  return (v) => (v === 'SOL' ? v : address(v));
}

function registerInvoice(program: Command): void {
  const invoice = program.command('invoice').description('invoices the ledger credits');
  invoice
    .command('create')
    .description(
      'create an invoice (idempotent: the same invoice again is a no-op; other fields under the same id are refused)',
    )
    .requiredOption('--id <id>', "the merchant's invoice id")
    .requiredOption('--mint <address>', "mint address ('SOL' for native transfers)", mintArg('--mint'))
    .requiredOption('--amount <baseUnits>', 'expected amount, a decimal string of base units', amountArg('--amount'))
    .option(
      '--deposit-address <address>',
      'token account or owner wallet the payment goes to',
      addressArg('--deposit-address'),
    )
    .option('--reference <key>', 'Solana Pay reference key', addressArg('--reference'))
    .option('--merchant <id>', 'merchant id', 'default')
    .action(
      withSchemaHint(
        async (o: {
          id: string;
          mint: string;
          amount: string;
          depositAddress?: string;
          reference?: string;
          merchant: string;
        }) => {
          await withPoolFromEnv({ max: 1 }, async (db) => {
            const { created, invoice: row } = await createLedger({ db }).createInvoice({
              id: o.id,
              mint: o.mint,
              expectedAmount: baseUnits(o.amount),
              depositAddress: o.depositAddress ?? null,
              referenceKey: o.reference ?? null,
              merchant: o.merchant,
            });
            process.stdout.write(
              `${JSON.stringify({ created, invoice: { ...row, expectedAmount: row.expectedAmount.toString(), creditedAmount: row.creditedAmount.toString() } })}\n`,
            );
          });
        },
      ),
    );
}

function registerReport(program: Command): void {
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

/** SIGTERM waits for the deliveries in flight (each at most the delivery timeout), plus time to mark them. */
function outboxGraceMs(deliveryTimeoutMs: number): number {
  return deliveryTimeoutMs + 5_000;
}

function registerOutbox(program: Command): void {
  const outbox = program
    .command('outbox')
    .description('the fulfilment outbox: deliver invoice.paid webhooks, replay dead letters');
  outbox
    .command('run')
    .description(
      'deliver due outbox rows to the merchant webhook (Idempotency-Key = fulfilment id, X-Oncepay-Signature = HMAC-SHA256)',
    )
    .option('--once', 'one claim round, then exit')
    .option('--drain', 'run until nothing is pending or delivering (dead letters excepted), then exit')
    .option(
      '--url <url>',
      "webhook URL for every row (else the merchant's webhook_endpoints.url)",
      urlArg('--url', ['http:', 'https:']),
    )
    .option('--secret <secret>', 'HMAC secret (else ONCEPAY_WEBHOOK_SECRET, else webhook_endpoints.secret)')
    .option('--batch-size <n>', 'rows claimed per round', intOption('--batch-size', 1), 10)
    .option(
      '--lease-seconds <s>',
      'a delivering row whose worker died is reclaimed after this',
      intOption('--lease-seconds'),
      60,
    )
    .option('--max-attempts <n>', 'attempts before a row is dead-lettered', intOption('--max-attempts', 1), 10)
    .option(
      '--backoff-base-ms <ms>',
      'first retry delay (doubles per attempt, with jitter)',
      intOption('--backoff-base-ms'),
      1000,
    )
    .option('--backoff-cap-ms <ms>', 'longest retry delay', intOption('--backoff-cap-ms'), 3_600_000)
    .option('--poll-ms <ms>', 'sleep between empty rounds', intOption('--poll-ms'), 1000)
    .option('--timeout-ms <ms>', 'HTTP timeout per delivery', intOption('--timeout-ms', 1), 10_000)
    .option(
      '--metrics-port <port>',
      'serve /metrics, /healthz and /readyz on 127.0.0.1:<port> while running',
      intOption('--metrics-port'),
    )
    .addHelpText(
      'after',
      shutdownHelp('--timeout-ms + 5 s', 'claims nothing more; deliveries in flight finish and are marked'),
    )
    .action(
      withSchemaHint(
        async (o: {
          once?: boolean;
          drain?: boolean;
          url?: string;
          secret?: string;
          batchSize: number;
          leaseSeconds: number;
          maxAttempts: number;
          backoffBaseMs: number;
          backoffCapMs: number;
          pollMs: number;
          timeoutMs: number;
          metricsPort?: number;
        }) => {
          const log = logger('outbox');
          const db = createPoolFromEnv({ max: Math.max(2, o.batchSize + 1), name: 'outbox-run' });
          const stop = onStopSignals(log, outboxGraceMs(o.timeoutMs));
          // The gauges read the table at scrape time; `worker` is assigned before any scrape can happen.
          const metrics =
            o.metricsPort === undefined ? undefined : createIndexerMetrics({ outboxStats: () => worker.stats() });
          const worker = createOutboxWorker({
            db,
            log,
            deliver: createWebhookDelivery({ timeoutMs: o.timeoutMs }),
            url: o.url,
            secret: o.secret ?? process.env.ONCEPAY_WEBHOOK_SECRET,
            batchSize: o.batchSize,
            leaseSeconds: o.leaseSeconds,
            maxAttempts: o.maxAttempts,
            backoffBaseSeconds: o.backoffBaseMs / 1000,
            backoffCapSeconds: o.backoffCapMs / 1000,
            pollMs: o.pollMs,
            metrics,
          });
          const server = metrics
            ? await serveMetrics({ port: o.metricsPort, registry: metrics.registry, db })
            : undefined;
          if (server) log.info({ url: server.url }, 'serving metrics');
          try {
            const result = o.once
              ? await worker.runOnce(stop.signal)
              : await worker.run({ signal: stop.signal, drain: o.drain });
            process.stdout.write(`${JSON.stringify(result)}\n`);
          } finally {
            stop.dispose();
            await server?.close();
            await db.end();
          }
        },
      ),
    );
  outbox
    .command('replay')
    .description('put dead letters back to pending with a fresh attempt budget')
    .argument('[id]', 'outbox id or fulfilment id')
    .option('--all-dead', 'every dead letter')
    .action(
      withSchemaHint(async (id: string | undefined, o: { allDead?: boolean }) => {
        if ((id === undefined) === !o.allDead)
          throw new OncepayError(OUTBOX_CODES.INVALID_OPTION, 'give exactly one of <id> or --all-dead', {
            flag: '--all-dead',
          });
        await withPoolFromEnv({ max: 1 }, async (db) => {
          const requeued = await replayDeadLetters(db, o.allDead ? { all: true } : { id: id! });
          process.stdout.write(`${JSON.stringify({ requeued })}\n`);
        });
      }),
    );
  outbox
    .command('set-endpoint')
    .alias('set-target') // its name before migration 0160
    .description("set a merchant's fulfilment webhook URL and HMAC secret (the webhook_endpoints table)")
    .requiredOption('--merchant <id>', 'merchant id', 'default')
    .requiredOption('--url <url>', 'webhook URL', urlArg('--url', ['http:', 'https:']))
    .requiredOption('--secret <secret>', 'HMAC-SHA256 secret')
    .action(
      withSchemaHint(async (o: { merchant: string; url: string; secret: string }) => {
        await withPoolFromEnv({ max: 1 }, async (db) => {
          await exec(db, upsertWebhookEndpoint(o.merchant, o.url, o.secret));
          process.stdout.write(`${JSON.stringify({ merchant: o.merchant, url: o.url })}\n`);
        });
      }),
    );
}
