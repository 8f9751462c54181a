// `oncepay indexer webhook`: the webhook receiver (indexer/source/webhook.ts); each delivery is a hint, verified
// against the chain (webhook-verifier.ts) before anything is credited.
import { Command } from 'commander';
import { SOURCE_CODES } from '../common/errors/codes';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import {
  buildWebhookApp,
  DEFAULT_BODY_LIMIT,
  DEFAULT_INLINE_CHECK_MS,
  PROVIDER_NAME,
  UNKNOWN_PROVIDER,
} from '../indexer/source/webhook';
import { DEFAULT_TOLERANCE_S } from '../indexer/source/webhook-auth';
import { DEFAULT_RECHECK } from '../indexer/source/webhook-hint-plan';
import { createWebhookMetrics } from '../indexer/source/webhook-metrics';
import { webhookSecrets } from '../indexer/source/webhook-secrets';
import {
  createChainVerifier,
  DEFAULT_HINT_CONCURRENCY,
  DEFAULT_HINT_MAX_AGE_MS,
  DEFAULT_HINT_RETENTION_MS,
  DEFAULT_MAX_PENDING_HINTS,
} from '../indexer/source/webhook-verifier';
import { wireSource } from '../indexer/source/wire';
import { collect, intOption, invalidFlag } from './options';
import { assertFinalized, commitmentOption, RpcOpts, withRpcOptions } from './source-options';

type WebhookOpts = RpcOpts & {
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
};

/** How a delivery is authenticated: the shared secret(s) and the signature's rules. */
function authOptions(c: Command): Command {
  return c
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
    .option('--require-signature', 'with --legacy-signature: demand the legacy HMAC, not just the bare secret');
}

export function registerWebhook(indexer: Command): void {
  const cmd = withRpcOptions(
    indexer
      .command('webhook')
      .description(
        'serve POST /v1/webhooks/:provider (+ /metrics, /healthz, /readyz): each delivery is a hint, verified against the chain before anything is credited',
      ),
  )
    .option('--port <port>', 'port (0 = any free port)', intOption('--port'), 8787)
    .option('--host <host>', 'address to listen on', '127.0.0.1');
  authOptions(cmd)
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
    .action(serveWebhook);
}

/** `indexer webhook`: the receiver and its background chain checks, until SIGTERM. */
async function serveWebhook(o: WebhookOpts): Promise<void> {
  // A credit is final: at confirmed a fork could take back money the ledger already credited and the outbox
  // fulfilled. `indexer run --commitment confirmed` keeps confirmed transfers apart, as provisional rows.
  assertFinalized(
    o.commitment,
    'the webhook credits only transactions the chain finalized (--commitment confirmed would credit money a fork can take back; `indexer run --commitment confirmed` keeps confirmed transfers as provisional rows)',
  );
  const secrets = webhookSecrets(o);
  const w = wireSource(o, 'webhook', 'indexer-webhook');
  if (o.secret !== undefined)
    w.log.warn('--secret is visible to every user of this machine (ps); use --secret-file or ONCEPAY_WEBHOOK_SECRET');
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
