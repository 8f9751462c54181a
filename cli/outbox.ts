// `oncepay outbox run | replay | set-endpoint`: the fulfilment outbox (indexer/outbox/): deliver invoice.paid
// webhooks, replay dead letters, set a merchant's endpoint.
import { Command } from 'commander';
import { OncepayError } from '../common/errors';
import { OUTBOX_CODES } from '../common/errors/codes';
import { logger } from '../common/log';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import { createPoolFromEnv, withPoolFromEnv } from '../db/pool';
import { exec } from '../db/sql';
import { createWebhookDelivery } from '../indexer/delivery';
import { createIndexerMetrics, serveMetrics } from '../indexer/metrics';
import { createOutboxWorker, replayDeadLetters } from '../indexer/outbox';
import { upsertWebhookEndpoint } from '../indexer/outbox/queries';
import { intOption, urlArg } from './options';
import { withSchemaHint } from './schema-hint';

export function register(program: Command): void {
  const outbox = program
    .command('outbox')
    .description('the fulfilment outbox: deliver invoice.paid webhooks, replay dead letters');
  for (const add of [run, replay, setEndpoint]) add(outbox);
}

/** SIGTERM waits for the deliveries in flight (each at most the delivery timeout), plus time to mark them. */
function outboxGraceMs(deliveryTimeoutMs: number): number {
  return deliveryTimeoutMs + 5_000;
}

interface RunOpts {
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
}

function run(outbox: Command): void {
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
    .action(withSchemaHint(runOutbox));
}

/** `outbox run`: a worker until --once, --drain or SIGTERM ends it; its result as one JSON line. */
async function runOutbox(o: RunOpts): Promise<void> {
  const log = logger('outbox');
  const db = createPoolFromEnv({ max: Math.max(2, o.batchSize + 1), name: 'outbox-run' });
  const stop = onStopSignals(log, outboxGraceMs(o.timeoutMs));
  // The gauges read the table at scrape time; `worker` is assigned before any scrape can happen.
  const metrics = o.metricsPort === undefined ? undefined : createIndexerMetrics({ outboxStats: () => worker.stats() });
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
  const server = metrics ? await serveMetrics({ port: o.metricsPort, registry: metrics.registry, db }) : undefined;
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
}

function replay(outbox: Command): void {
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
}

function setEndpoint(outbox: Command): void {
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
