// `oncepay indexer run | backfill | webhook`: the sources, wired to the real RPC client, ledger and metrics.
import * as fs from 'fs';
import { Command, Option } from 'commander';
import { clusterOption, collect, intOption, invalidFlag, rpcOption } from '../../common/cli-options';
import * as cliProgress from 'cli-progress';
import { OncepayError } from '../../common/errors';
import { logger } from '../../common/log';
import { onStopSignals, shutdownHelp } from '../../common/shutdown';
import { isDatabaseUnavailable } from '../../db/unavailable';
import { createPoolFromEnv } from '../../db/pool';
import { decodeBlock } from '../decode';
import { createLedger } from '../ledger';
import { createIndexerMetrics, serveMetrics } from '../metrics';
import { createRpcClient, DEFAULT_RETRY, RpcClient } from '../rpc';
import { runBackfill } from './backfill';
import { SOURCE_CODES } from '../../common/errors/codes';
import { createSourceMetrics } from './metrics';
import { SourceMetrics } from './ports';
import { createProvisionalTracker } from './provisional';
import { createScanner, DEFAULT_SCANNER } from './scanner';
import {
  buildWebhookApp,
  DEFAULT_BODY_LIMIT,
  DEFAULT_INLINE_CHECK_MS,
  PROVIDER_NAME,
  UNKNOWN_PROVIDER,
} from './webhook';
import { DEFAULT_TOLERANCE_S } from './webhook-auth';
import { DEFAULT_RECHECK } from './webhook-hint-plan';
import { createWebhookMetrics } from './webhook-metrics';
import {
  createChainVerifier,
  DEFAULT_HINT_CONCURRENCY,
  DEFAULT_HINT_MAX_AGE_MS,
  DEFAULT_HINT_RETENTION_MS,
  DEFAULT_MAX_PENDING_HINTS,
} from './webhook-verifier';
import type { DecodeBlockFn } from './block-reader';

const DEFAULT_RPC = 'http://127.0.0.1:8899';
/** `indexer run --once` stopped below the tip at a slot it could not fetch or decode (the next run retries it). */
export const EXIT_STOPPED_AT_SLOT = 3;

interface RpcOpts {
  rpc: string;
  cluster: string;
  rpcTimeoutMs: number;
  rpcAttempts: number;
}

function commitmentOption(help = 'commitment to read at; only "finalized" is offered here') {
  return new Option('--commitment <level>', help).choices(['finalized', 'confirmed']).default('finalized');
}

/** Backfill and the webhook credit finalized transactions only (`indexer run` keeps confirmed ones provisional). */
function assertFinalized(c: string, why: string): void {
  if (c !== 'finalized') throw new OncepayError(SOURCE_CODES.COMMITMENT_UNSUPPORTED, why);
}

function withRpcOptions(cmd: Command): Command {
  return cmd
    .addOption(rpcOption({ fallback: DEFAULT_RPC, description: 'JSON-RPC endpoint' }))
    .addOption(clusterOption('cluster name, part of every receipt key'))
    .option(
      '--rpc-timeout-ms <ms>',
      'deadline of one RPC attempt',
      intOption('--rpc-timeout-ms', 1),
      DEFAULT_RETRY.timeoutMs,
    )
    .option(
      '--rpc-attempts <n>',
      'attempts per RPC call (retries on 429, 5xx, timeouts, network errors)',
      intOption('--rpc-attempts', 1),
      DEFAULT_RETRY.attempts,
    );
}

/** What every source command needs: a logger, the metrics registry, the pool and the ledger over it. */
export function wireLedger(component: string, command: string) {
  const log = logger(component);
  const indexerMetrics = createIndexerMetrics({ defaults: true });
  const metrics: SourceMetrics = createSourceMetrics(indexerMetrics);
  const pool = createPoolFromEnv({ name: command });
  const ledger = createLedger({ db: pool, log: logger('ledger'), metrics: indexerMetrics });
  return { log, indexerMetrics, metrics, pool, ledger };
}

/** With --metrics-port: /metrics (+ /healthz, /readyz) on 127.0.0.1 for a source command's registry and pool. */
export async function serveMetricsIfAsked(w: ReturnType<typeof wireLedger>, port: number | undefined) {
  if (port === undefined) return undefined;
  const server = await serveMetrics({ port, registry: w.indexerMetrics.registry, db: w.pool });
  w.log.info({ url: server.url }, 'metrics listening');
  return server;
}

/** The RPC client of a source command: its failed attempts counted in oncepay_rpc_errors_total and logged. */
export function sourceRpc(
  o: Pick<RpcOpts, 'rpc' | 'rpcTimeoutMs' | 'rpcAttempts'>,
  w: Pick<ReturnType<typeof wireLedger>, 'log' | 'metrics'>,
): RpcClient {
  return createRpcClient({
    url: o.rpc,
    retry: { timeoutMs: o.rpcTimeoutMs, attempts: o.rpcAttempts },
    onError: (kind) => w.metrics.countRpcError(kind),
    onRetry: (i) => w.log.warn(i, 'rpc attempt failed, retrying'),
  });
}

/** wireLedger plus the RPC client (its failed attempts counted and logged) and the block decoder. */
function wire(o: RpcOpts, component: string, command: string) {
  const { log, indexerMetrics, metrics, pool, ledger } = wireLedger(component, command);
  const rpc = sourceRpc(o, { log, metrics });
  // A transaction whose transfers disagree with its own token balances is never credited; it must not stop the
  // scan either (reading a finalized block again cannot change it): skipped, logged and counted.
  const decode: DecodeBlockFn = (block, slot) =>
    decodeBlock(block, {
      slot,
      cluster: o.cluster,
      onBalanceMismatch: (e) => {
        metrics.countBalanceMismatch(o.cluster, component);
        log.error({ slot, code: e.code, ...e.context }, `transaction refused, nothing credited: ${e.message}`);
      },
    });
  return { log, indexerMetrics, metrics, pool, ledger, rpc, decode };
}

export function registerSources(program: Command): void {
  const indexer =
    program.commands.find((c) => c.name() === 'indexer') ??
    program.command('indexer').description('the receipts indexer');

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
    )
    .option(
      '--chunk-size <blocks>',
      'blocks per ledger transaction',
      intOption('--chunk-size', 1),
      DEFAULT_SCANNER.chunkSize,
    )
    .option('--concurrency <n>', 'getBlock calls in flight', intOption('--concurrency', 1), DEFAULT_SCANNER.concurrency)
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
    .action(
      async (
        o: RpcOpts & {
          commitment: string;
          rescanWindow: number;
          fromSlot?: number;
          pollMs: number;
          maxSlotsPerPass: number;
          chunkSize: number;
          concurrency: number;
          metricsPort?: number;
          once?: boolean;
        },
      ) => {
        const w = wire(o, 'scanner', 'indexer-run');
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
      },
    );

  withRpcOptions(
    indexer
      .command('backfill')
      .description(
        'read a slot range through the same path as the scanner (source "backfill"); safe beside a running scanner',
      ),
  )
    .requiredOption('--from-slot <slot>', 'first slot (inclusive)', intOption('--from-slot'))
    .requiredOption('--to-slot <slot>', 'last slot (inclusive)', intOption('--to-slot'))
    .addOption(commitmentOption())
    .option(
      '--chunk-size <blocks>',
      'blocks per ledger transaction',
      intOption('--chunk-size', 1),
      DEFAULT_SCANNER.chunkSize,
    )
    .option('--concurrency <n>', 'getBlock calls in flight', intOption('--concurrency', 1), DEFAULT_SCANNER.concurrency)
    .option('--list-span <slots>', 'slots per getBlocks call', intOption('--list-span', 1), 5000)
    .addHelpText(
      'after',
      '\nPrints a JSON summary; after a stop it carries interrupted.resumeFromSlot (run again from there).',
    )
    .addHelpText('after', shutdownHelp(undefined, 'finishes the ledger batch in flight and stops'))
    .action(
      async (
        o: RpcOpts & {
          fromSlot: number;
          toSlot: number;
          commitment: string;
          chunkSize: number;
          concurrency: number;
          listSpan: number;
        },
      ) => {
        assertFinalized(
          o.commitment,
          'backfill reads finalized blocks only (--commitment confirmed is for `indexer run`)',
        );
        const w = wire(o, 'backfill', 'indexer-backfill');
        const stop = onStopSignals(w.log);
        const tty = process.stderr.isTTY === true;
        const bar = tty
          ? new cliProgress.SingleBar(
              {
                stream: process.stderr,
                format:
                  'backfill [{bar}] {value}/{total} slots | {blocks} blocks | {inserted} new | {duplicates} dup | {failed} failed',
              },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
        bar?.start(o.toSlot - o.fromSlot + 1, 0, { blocks: 0, inserted: 0, duplicates: 0, failed: 0 });
        try {
          const r = await runBackfill(
            {
              rpc: w.rpc,
              ledger: w.ledger,
              decode: w.decode,
              log: w.log,
              metrics: w.metrics,
              onProgress: (p) => {
                if (bar)
                  bar.update(p.done, {
                    blocks: p.blocks,
                    inserted: p.inserted,
                    duplicates: p.duplicates,
                    failed: p.failed,
                  });
                else process.stderr.write(`${JSON.stringify({ level: 'info', msg: 'backfill progress', ...p })}\n`);
              },
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
          bar?.stop();
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
          bar?.stop();
          stop.dispose();
          await w.pool.end();
        }
      },
    );

  withRpcOptions(
    indexer
      .command('webhook')
      .description(
        'serve POST /v1/webhooks/:provider (+ /metrics, /healthz, /readyz): each delivery is a hint, verified against the chain before anything is credited',
      ),
  )
    .option('--port <port>', 'port (0 = any free port)', intOption('--port'), 8787)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--secret-file <path>',
      'file holding the shared secret(s), one per line (several while rotating); or env ONCEPAY_WEBHOOK_SECRET',
    )
    .option(
      '--secret <secret>',
      'the shared secret on the command line (visible in `ps`: prefer --secret-file or the env)',
    )
    .option(
      '--signature-tolerance <seconds>',
      'largest |now − t| of a signature `t=…,v1=…` (replays outside it are refused)',
      intOption('--signature-tolerance', 1),
      DEFAULT_TOLERANCE_S,
    )
    .option(
      '--legacy-signature',
      'DEPRECATED: also accept the untimestamped `sha256=` HMAC and the bare secret (replayable)',
    )
    .option('--require-signature', 'with --legacy-signature: demand the legacy HMAC, not just the bare secret')
    .addOption(
      commitmentOption(
        'commitment getTransaction is asked at before a delivery is credited; only "finalized" is offered (a credit at confirmed is money a fork can take back)',
      ),
    )
    .option(
      '--hint-max-age <seconds>',
      'a signature the chain has not confirmed by then is dropped (reason not_found / rpc_error)',
      intOption('--hint-max-age', 1),
      DEFAULT_HINT_MAX_AGE_MS / 1000,
    )
    .option(
      '--recheck-ms <ms>',
      'first wait before a pending signature is checked again (doubles, with jitter, up to 60 s)',
      intOption('--recheck-ms', 1),
      DEFAULT_RECHECK.baseMs,
    )
    .option(
      '--inline-check-ms <ms>',
      'how long a delivery waits for the first chain check of its signatures before answering (202 if still pending)',
      intOption('--inline-check-ms', 0),
      DEFAULT_INLINE_CHECK_MS,
    )
    .option(
      '--provider <name>',
      `a provider name deliveries come under (POST /v1/webhooks/<name>; repeatable, or comma-separated): its own metric label, cap and turn in the checks. Every other name is accepted when authenticated, but labelled, capped and checked as "${UNKNOWN_PROVIDER}"`,
      providerArg,
    )
    .option(
      '--max-pending-hints <n>',
      'signatures one provider (or all unknown ones together) may have waiting for the chain; a delivery past it gets 429 + Retry-After and nothing is stored',
      intOption('--max-pending-hints', 1),
      DEFAULT_MAX_PENDING_HINTS,
    )
    .option(
      '--hint-round <n>',
      'signatures one background round checks at most (default --max-pending-hints × (providers + 1): every pending one)',
      intOption('--hint-round', 1),
    )
    .option(
      '--hint-concurrency <n>',
      'getSignatureStatuses (256 signatures each) and getTransaction calls of one check in flight at once',
      intOption('--hint-concurrency', 1),
      DEFAULT_HINT_CONCURRENCY,
    )
    .option(
      '--hint-retention <seconds>',
      'settled signatures (credited, refuted) are deleted this long after settling; unconfirmed ones when they expire',
      intOption('--hint-retention', 1),
      DEFAULT_HINT_RETENTION_MS / 1000,
    )
    .option('--trust-provider', 'DANGEROUS: credit what deliveries say without asking the chain (the old behaviour)')
    .option(
      '--body-limit <bytes>',
      'largest body accepted (larger → 413)',
      intOption('--body-limit', 1),
      DEFAULT_BODY_LIMIT,
    )
    .addHelpText(
      'after',
      '\nWhile the database is away deliveries get 503 + Retry-After ({code: "DATABASE_UNAVAILABLE"}); /healthz and /readyz report it.',
    )
    .addHelpText(
      'after',
      shutdownHelp(undefined, 'stops accepting, answers the deliveries in flight and ends the background chain checks'),
    )
    .action(
      async (
        o: RpcOpts & {
          port: number;
          host: string;
          secretFile?: string;
          secret?: string;
          signatureTolerance: number;
          legacySignature?: boolean;
          requireSignature?: boolean;
          commitment: string;
          hintMaxAge: number;
          recheckMs: number;
          inlineCheckMs: number;
          trustProvider?: boolean;
          bodyLimit: number;
          provider?: string[];
          maxPendingHints: number;
          hintRound?: number;
          hintConcurrency: number;
          hintRetention: number;
        },
      ) => {
        // A credit is final: at confirmed a fork could take back money the ledger already credited and the outbox
        // fulfilled. `indexer run --commitment confirmed` keeps confirmed transfers apart, as provisional rows.
        assertFinalized(
          o.commitment,
          'the webhook credits only transactions the chain finalized (--commitment confirmed would credit money a fork can take back; `indexer run --commitment confirmed` keeps confirmed transfers as provisional rows)',
        );
        const secrets = webhookSecrets(o);
        const w = wire(o, 'webhook', 'indexer-webhook');
        if (o.secret !== undefined)
          w.log.warn(
            '--secret is visible to every user of this machine (ps); use --secret-file or ONCEPAY_WEBHOOK_SECRET',
          );
        const providers = [...new Set(o.provider ?? [])];
        const webhookMetrics = createWebhookMetrics(w.indexerMetrics.registry, providers);
        const verifier = o.trustProvider
          ? undefined
          : createChainVerifier({
              db: w.pool,
              rpc: w.rpc,
              ledger: w.ledger,
              cluster: o.cluster,
              maxAgeMs: o.hintMaxAge * 1000,
              recheck: { baseMs: o.recheckMs, capMs: Math.max(o.recheckMs, DEFAULT_RECHECK.capMs) },
              providers,
              maxPendingHints: o.maxPendingHints,
              roundSize: o.hintRound,
              concurrency: o.hintConcurrency,
              retentionMs: o.hintRetention * 1000,
              log: w.log,
              metrics: webhookMetrics,
            });
        const app = buildWebhookApp({
          db: w.pool,
          ledger: w.ledger,
          cluster: o.cluster,
          secret: secrets,
          signatureToleranceS: o.signatureTolerance,
          legacySignature: o.legacySignature,
          requireSignature: o.requireSignature,
          verifier,
          inlineCheckMs: o.inlineCheckMs,
          trustProvider: o.trustProvider,
          bodyLimit: o.bodyLimit,
          providers,
          maxPendingHints: o.maxPendingHints,
          log: w.log,
          metrics: w.metrics,
          webhookMetrics,
          registry: w.indexerMetrics.registry,
        });
        const stop = onStopSignals(w.log);
        const address = await app.listen({ port: o.port, host: o.host });
        w.log.info(
          {
            address,
            verified: !o.trustProvider,
            rpc: o.trustProvider ? undefined : o.rpc,
            commitment: o.commitment,
            providers,
            maxPendingHints: o.maxPendingHints,
          },
          'webhook receiver listening',
        );
        process.stdout.write(`${JSON.stringify({ listening: address })}\n`);
        // The background re-check of pending hints runs in this process until it stops.
        const rechecks = verifier?.run({ signal: stop.signal, pollMs: Math.min(o.recheckMs, 1000) });
        await stop.stopped;
        // Stop accepting, answer the deliveries in flight, let the background round end, then close the pool.
        await app.close();
        await rechecks;
        stop.dispose();
        await w.pool.end();
      },
    );
}

/** --provider, repeatable or comma-separated: each name as the route accepts it, and never the reserved `unknown`. */
function providerArg(v: string, previous: string[] | undefined): string[] {
  const names = collect(v, undefined);
  for (const n of names)
    if (!PROVIDER_NAME.test(n) || n === UNKNOWN_PROVIDER)
      throw invalidFlag(
        SOURCE_CODES.INVALID_OPTION,
        `--provider must be [a-z0-9][a-z0-9_-]{0,39} and not "${UNKNOWN_PROVIDER}", got ${JSON.stringify(n)}`,
      );
  return [...(previous ?? []), ...names];
}

/** The webhook's secrets: --secret-file (one per line), else ONCEPAY_WEBHOOK_SECRET, else --secret. */
function webhookSecrets(o: { secretFile?: string; secret?: string }): string[] {
  let secrets: string[] = [];
  if (o.secretFile !== undefined) {
    secrets = fs
      .readFileSync(o.secretFile, 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '');
  } else if (process.env.ONCEPAY_WEBHOOK_SECRET) {
    secrets = [process.env.ONCEPAY_WEBHOOK_SECRET];
  } else if (o.secret !== undefined) {
    secrets = [o.secret];
  }
  if (secrets.length === 0)
    throw new OncepayError(
      SOURCE_CODES.INVALID_OPTION,
      'a webhook secret is required: --secret-file, ONCEPAY_WEBHOOK_SECRET or --secret',
    );
  return secrets;
}
