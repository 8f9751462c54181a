// `oncepay payout …`: create, execute, resume, show and derive payouts from the command line. Output is JSON on
// stdout (one object; `--json` keeps it on one line), logs are JSON on stderr.
import * as crypto from 'crypto';
import { Command, Option } from 'commander';
import { Connection, Keypair } from '@solana/web3.js';
import { Pool } from 'pg';
import { register as metricsRegistry } from 'prom-client';
import {
  addressOption,
  amountArg,
  intOption,
  invalidFlag,
  merchantRefArg,
  pollMsOption,
  rowIdArg,
  rpcOption,
  timeoutMsOption,
} from '../common/cli-options';
import { serveMetrics } from '../indexer/metrics';
import { createPoolFromEnv, withPoolFromEnv } from '../db/pool';
import { OncepayError } from '../common/errors';
import { logger } from '../common/log';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import { hashApiKey } from './api/api-key-auth';
import { pruneIdempotencyKeys } from './api/idempotency';
import { CLI_CODES, PAYOUT_CODES } from '../common/errors/codes';
import { deriveOperation } from './op-id';
import { createConnectionChain } from './payout/chain';
import { mintDecimalsFromChain } from './invoice/mint-decimals-rpc';
import { createPayout } from './payout/create-payout';
import { EXECUTOR_NAMES, executorNamed } from './payout/executor';
import { RunPayoutDeps, runPayout } from './payout/run-payout';
import {
  DEFAULT_BLOCKHASH_MAX_AGE_MS,
  DEFAULT_MERCHANTS_REFRESH_MS,
  PayoutWorkerOptions,
  startPayoutWorker,
} from './payout/worker';
import { keypairFileArg, keypairFilesArg, readKeypairFile } from './payout/keypair';
import { ONCEPAY_PROGRAM_ID } from './payout/program';
import { signerOfMerchant } from './payout/signers';
import {
  FINAL_STATES,
  MerchantRow,
  PayoutState,
  getMerchant,
  getMerchantByAddress,
  getPayout,
  getPayoutOfMerchantById,
  insertMerchant,
  listAttempts,
  listPayoutsOfMerchant,
  reopenFailedPayoutsOfMerchant,
} from './payout/store';
import { resumePayouts } from './payout/resume';
import { payoutView } from './payout/view';
import { address, isPayoutId, PAYOUT_ID_MAX_BYTES } from './types';
import { Db } from '../db/sql';

function print(x: unknown, json?: boolean): void {
  process.stdout.write(`${JSON.stringify(x, null, json ? undefined : 2)}\n`);
}

/** --commitment: at which an attempt counts as landed (a value outside the two was silently taken as confirmed). */
function settleCommitmentOption(): Option {
  return new Option('--commitment <level>', 'commitment at which an attempt counts as landed')
    .choices(['confirmed', 'finalized'])
    .default('confirmed');
}

/** Exit code of `payout execute` when the payout ended failed (a program error such as MerchantPaused) or in conflict. */
export const EXIT_PAYOUT_NOT_PAID = 4;

const PAYOUT_STATES: readonly PayoutState[] = ['pending', 'executing', 'succeeded', 'conflict', 'failed'];

interface ChainOpts {
  rpc: string;
  /** Keypair files of payout authorities (--authority, repeatable). */
  authority: string[];
  payer?: string;
  pollMs: number;
  timeoutMs?: number;
  commitment: string;
  executor?: string;
}

/** No JSON-RPC request waits longer than this: a hung node is a failed call (retried), and a drain stays bounded. */
const RPC_REQUEST_TIMEOUT_MS = 30_000;

/** A payout id flag: 1–200 bytes of UTF-8 without control characters, checked at parse time. */
function payoutIdFlag(name: string): (v: string) => string {
  return (v) => {
    if (isPayoutId(v)) return v;
    throw invalidFlag(
      PAYOUT_CODES.ID_MALFORMED,
      `${name} must be 1–${PAYOUT_ID_MAX_BYTES} bytes of UTF-8 without control characters, got ${JSON.stringify(v)}`,
    );
  };
}

/** An API key flag: 16–512 visible ASCII characters (the Bearer token's rule); never echoed. */
function apiKeyFlag(name: string): (v: string) => string {
  return (v) => {
    if (/^[\x21-\x7e]{16,512}$/.test(v)) return v;
    throw invalidFlag(CLI_CODES.VALUE_INVALID, `${name} must be 16–512 visible ASCII characters`);
  };
}

/** The registered merchant `ref` names (its api_merchants id, or its merchant config address), or MERCHANT_NOT_FOUND. */
async function resolveMerchant(db: Db, ref: string, flag = '--merchant'): Promise<MerchantRow> {
  const m = /^[0-9]+$/.test(ref) ? await getMerchant(db, ref) : await getMerchantByAddress(db, ref);
  if (!m)
    throw new OncepayError(
      PAYOUT_CODES.MERCHANT_NOT_FOUND,
      `${flag} ${ref}: no such registered merchant; add it with \`oncepay payout merchant-add\``,
      { flag },
    );
  return m;
}

function chainDeps(db: Pool, o: ChainOpts): RunPayoutDeps & { authorities: Keypair[] } {
  const authorities = o.authority.map((f) => readKeypairFile(f));
  const connection = new Connection(o.rpc, {
    commitment: 'confirmed',
    disableRetryOnRateLimit: true,
    fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(RPC_REQUEST_TIMEOUT_MS) }),
  });
  const signal = o.timeoutMs === undefined ? undefined : AbortSignal.timeout(o.timeoutMs);
  return {
    db,
    chain: createConnectionChain({
      connection,
      settleCommitment: o.commitment === 'finalized' ? 'finalized' : 'confirmed',
    }),
    authority: authorities[0],
    authorities,
    payer: o.payer ? readKeypairFile(o.payer) : undefined,
    pollIntervalMs: o.pollMs,
    signal,
    log: logger('payout'),
    executor: executorNamed(o.executor ?? 'fast'),
  };
}

/** --executor, on every command that runs payouts (app/payout/executor.ts). */
const executorOption = () =>
  new Option(
    '--executor <name>',
    'who performs the journal rules: fast (shared chain calls, deferred bookkeeping) or plain (the reference: ' +
      'one payout, one connection, every write before the next step)',
  )
    .choices(EXECUTOR_NAMES)
    .default('fast');

const AUTHORITY_HELP =
  "keypair file (JSON array of 64 bytes) of a merchant's payout authority; repeat it for several merchants: each payout is signed with its merchant's own (read from the merchant config on chain), and payouts of merchants whose payout authority is none of these are not touched";

/**
 * `payout serve` runs a worker pool when given --authority, on the endpoint of --rpc or ONCEPAY_RPC_URL. A --rpc
 * typed without --authority is refused; ONCEPAY_RPC_URL alone, set for the other commands, leaves it an API only.
 */
export function serveWorkerRpc(
  rpc: string | undefined,
  authority: string | undefined,
  rpcSource: string | undefined,
): string | undefined {
  if (authority ? !rpc : rpcSource === 'cli')
    throw new OncepayError(PAYOUT_CODES.OPTION_INVALID, '--rpc and --authority go together');
  return authority ? rpc : undefined;
}

function chainOptions(c: Command): Command {
  return c
    .addOption(rpcOption({ required: true }))
    .requiredOption('--authority <path>', AUTHORITY_HELP, keypairFilesArg('--authority'))
    .option('--payer <path>', 'keypair file of the fee payer (default: the authority)', keypairFileArg('--payer'))
    .addOption(pollMsOption())
    .addOption(timeoutMsOption('give up after this long (the journal keeps every attempt; resume later)'))
    .addOption(settleCommitmentOption())
    .addOption(executorOption())
    .option('--json', 'one-line JSON output');
}

export function register(program: Command): void {
  const payout = program
    .command('payout')
    .description('payouts executed exactly once (op account PDA + attempt journal)');

  payout
    .command('opid')
    .description('derive the op_id and op account of a payout: {"opId","opPda"}')
    .addOption(addressOption('--program <address>', 'oncepay program id').default(ONCEPAY_PROGRAM_ID))
    .addOption(
      addressOption(
        '--merchant <address>',
        'merchant config account (PDA ["merchant", merchant_authority])',
      ).makeOptionMandatory(),
    )
    .requiredOption('--payout-id <id>', "the merchant's payout id (UTF-8)", payoutIdFlag('--payout-id'))
    .action((o: { program: string; merchant: string; payoutId: string }) => {
      const d = deriveOperation({ programId: o.program, merchant: o.merchant, payoutId: o.payoutId });
      print({ opId: d.opId, opPda: d.opPda }, true);
    });

  payout
    .command('merchant-add')
    .description('register a merchant for the API; prints its id and API key (shown once, stored hashed)')
    .requiredOption('--name <name>', 'display name')
    .addOption(addressOption('--program <address>', 'oncepay program id').default(ONCEPAY_PROGRAM_ID))
    .addOption(addressOption('--merchant <address>', 'merchant config account').makeOptionMandatory())
    .addOption(
      addressOption(
        '--vault <address>',
        'token account owned by the merchant PDA that payouts are paid from',
      ).makeOptionMandatory(),
    )
    .addOption(addressOption('--token-program <address>', 'SPL Token (default) or Token-2022 program id'))
    .addOption(addressOption('--receiving-address <address>', 'wallet its invoices are paid to unless one is named'))
    .option(
      '--api-key <key>',
      'use this API key instead of a generated one (16–512 visible ASCII characters; visible in `ps`: prefer the generated one)',
      apiKeyFlag('--api-key'),
    )
    .option('--json', 'one-line JSON output')
    .action(
      async (o: {
        name: string;
        program: string;
        merchant: string;
        vault: string;
        tokenProgram?: string;
        receivingAddress?: string;
        apiKey?: string;
        json?: boolean;
      }) => {
        // An API key is a credential, not an operation key: random is right here.
        const apiKey = o.apiKey ?? `ok_${crypto.randomBytes(24).toString('base64url')}`;
        const m = await withPoolFromEnv({}, (db) =>
          insertMerchant(db, {
            name: o.name,
            apiKeyHash: hashApiKey(apiKey),
            programId: address(o.program, 'program'),
            merchantAddress: address(o.merchant, 'merchant'),
            vault: address(o.vault, 'vault'),
            tokenProgram: o.tokenProgram ? address(o.tokenProgram, 'token program') : undefined,
            receivingAddress: o.receivingAddress ? address(o.receivingAddress, 'receiving address') : undefined,
          }),
        );
        print({ id: m.id, name: m.name, merchant: m.merchantAddress, apiKey }, o.json);
      },
    );

  payout
    .command('create')
    .description('store a payout row (idempotent on --payout-id); prints the payout')
    .requiredOption(
      '--merchant <address|id>',
      'merchant config account, or the api_merchants id',
      merchantRefArg('--merchant'),
    )
    .requiredOption('--payout-id <id>', "the merchant's payout id", payoutIdFlag('--payout-id'))
    .addOption(addressOption('--recipient <address>', 'recipient token account').makeOptionMandatory())
    .addOption(addressOption('--mint <address>', 'token mint').makeOptionMandatory())
    .requiredOption('--amount <base units>', 'amount in base units (decimal string)', amountArg('--amount'))
    .option('--json', 'one-line JSON output')
    .action(
      async (o: {
        merchant: string;
        payoutId: string;
        recipient: string;
        mint: string;
        amount: string;
        json?: boolean;
      }) => {
        await withPoolFromEnv({}, async (db) => {
          const m = await resolveMerchant(db, o.merchant);
          const r = await createPayout(db, m, {
            payoutId: o.payoutId,
            recipient: o.recipient,
            mint: o.mint,
            amount: o.amount,
          });
          print({ created: r.created, payout: payoutView(r.row, await listAttempts(db, r.row.id)) }, o.json);
        });
      },
    );

  chainOptions(
    payout
      .command('execute')
      .description(
        'execute one payout (or finish executing it): persists each attempt before sending, then resolves it',
      )
      .argument('<id>', 'payout id (the row id printed by create)', rowIdArg('<id>'))
      .option('--retry-failed', 're-open a payout whose attempt failed with a program error')
      .addHelpText(
        'after',
        `\nSigned with the --authority that is the payout's merchant's payout authority on chain; none is → ONCEPAY__PAYOUT__SIGNER_UNAUTHORIZED, nothing signed. Exit ${EXIT_PAYOUT_NOT_PAID} when the payout ends failed (the program's error name and number, e.g. "MerchantPaused (6002)", in "error") or in conflict.`,
      ),
  ).action(async (id: string, o: ChainOpts & { json?: boolean; retryFailed?: boolean }) => {
    await withPoolFromEnv({}, async (db) => {
      const p = await getPayout(db, id);
      if (!p) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`);
      const deps = chainDeps(db, o);
      // A final payout needs no signer (it is reported as it is); any other is signed with its merchant's key only.
      const finalNow = FINAL_STATES.includes(p.state) && !(o.retryFailed && p.state === 'failed');
      const m = finalNow ? undefined : await getMerchant(db, p.merchantId);
      const authority = m ? await signerOfMerchant(deps.chain, deps.authorities, m, `payout ${id}`) : deps.authority;
      const r = await runPayout(p, { ...deps, authority, retryFailed: o.retryFailed });
      print(r, o.json);
      if (r && (r.state === 'failed' || r.state === 'conflict')) process.exitCode = EXIT_PAYOUT_NOT_PAID;
    });
  });

  chainOptions(
    payout
      .command('resume')
      .description(
        'resolve every payout left with an uncertain attempt (after a crash); --include-pending also starts pending ones. Only the payouts of merchants whose payout authority is one of the --authority keys',
      )
      .option('--include-pending', 'also execute payouts that have no attempt yet'),
  ).action(async (o: ChainOpts & { json?: boolean; includePending?: boolean }) => {
    await withPoolFromEnv({}, async (db) => {
      const r = await resumePayouts({ ...chainDeps(db, o), includePending: o.includePending });
      print(r, o.json);
    });
  });

  payout
    .command('show')
    .description('a payout with its attempts and on-chain proof')
    .argument('<id>', 'payout row id', rowIdArg('<id>'))
    .option(
      '--merchant <address|id>',
      "only if it is this merchant's payout (another merchant's is not found)",
      merchantRefArg('--merchant'),
    )
    .option('--json', 'one-line JSON output')
    .action(async (id: string, o: { merchant?: string; json?: boolean }) => {
      await withPoolFromEnv({}, async (db) => {
        const p = o.merchant
          ? await getPayoutOfMerchantById(db, (await resolveMerchant(db, o.merchant)).id, id)
          : await getPayout(db, id);
        if (!p) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`);
        print(payoutView(p, await listAttempts(db, p.id)), o.json);
      });
    });

  payout
    .command('list')
    .description("a merchant's payouts, newest first (e.g. --state failed: what `payout retry` would reopen)")
    .requiredOption(
      '--merchant <address|id>',
      'the merchant (api_merchants id or merchant config address)',
      merchantRefArg('--merchant'),
    )
    .addOption(new Option('--state <state>', 'only payouts in this state').choices(PAYOUT_STATES))
    .option('--limit <n>', 'at most this many', intOption('--limit', 1), 100)
    .option('--json', 'one-line JSON output')
    .action(async (o: { merchant: string; state?: PayoutState; limit: number; json?: boolean }) => {
      await withPoolFromEnv({}, async (db) => {
        const m = await resolveMerchant(db, o.merchant);
        const list = await listPayoutsOfMerchant(db, m.id, { state: o.state, limit: o.limit });
        print(
          list.map((p) => payoutView(p, [])),
          o.json,
        );
      });
    });

  payout
    .command('retry')
    .description(
      "reopen a merchant's failed payout (or all of them with --all-failed): back to executing and due now, so a worker holding the merchant's payout authority claims it; it signs a new attempt only if the op account is still absent (never pays twice)",
    )
    .argument('[id]', 'the failed payout (row id)', rowIdArg('[id]'))
    .requiredOption(
      '--merchant <address|id>',
      'the merchant whose payouts to reopen (api_merchants id or merchant config address)',
      merchantRefArg('--merchant'),
    )
    .option('--all-failed', 'every failed payout of --merchant')
    .option('--json', 'one-line JSON output')
    .action(async (id: string | undefined, o: { merchant: string; allFailed?: boolean; json?: boolean }) => {
      if ((id === undefined) === !o.allFailed)
        throw new OncepayError(PAYOUT_CODES.OPTION_INVALID, 'give a payout id or --all-failed (one of them)', {
          flag: '--all-failed',
        });
      await withPoolFromEnv({}, async (db) => {
        const m = await resolveMerchant(db, o.merchant);
        const reopened = await reopenFailedPayoutsOfMerchant(db, m.id, id === undefined ? null : [id]);
        if (id !== undefined && reopened.length === 0) {
          const p = await getPayoutOfMerchantById(db, m.id, id);
          throw new OncepayError(
            PAYOUT_CODES.NOT_FOUND,
            p
              ? `payout ${id} is ${p.state}, not failed: nothing to retry`
              : `payout ${id} not found for --merchant ${o.merchant}`,
            { id },
          );
        }
        print({ merchant: m.merchantAddress, reopened: reopened.map((p) => p.id) }, o.json);
      });
    });

  payout
    .command('prune-keys')
    .description('delete completed Idempotency-Keys older than --hours (at least 24)')
    .option('--hours <n>', 'retention in hours (≥ 24)', intOption('--hours'), 24)
    .option('--json', 'one-line JSON output')
    .action(async (o: { hours: number; json?: boolean }) => {
      const deleted = await withPoolFromEnv({}, (db) => pruneIdempotencyKeys(db, o.hours * 3600_000));
      print({ deleted }, o.json);
    });

  workerFlagOptions(
    payout
      .command('serve')
      .description(
        'serve the merchant API (POST /v1/payouts stores, GET /v1/payouts/:id, /openapi.json, /metrics); with --rpc and --authority ' +
          'it also runs a payout worker pool in the same process (as `oncepay payout worker`, with its own connections). On ' +
          'SIGTERM/SIGINT it stops accepting, drains the pool and exits 0 within --drain-ms + 5 s',
      )
      .option('--host <host>', 'listen address', '127.0.0.1')
      .option('--port <port>', 'port (0: any free port)', intOption('--port'), 8080)
      .addOption(rpcOption({ description: 'Solana JSON-RPC endpoint: run a payout worker pool in this process' }))
      .option('--authority <path>', `with --rpc: ${AUTHORITY_HELP}`, keypairFilesArg('--authority')),
  )
    .addHelpText(
      'after',
      '\nGET /healthz (alive) and GET /readyz (database reachable, migrations applied). While the database is away requests get 503 + Retry-After ({code: "DATABASE_UNAVAILABLE"}).',
    )
    .addHelpText(
      'after',
      shutdownHelp(
        '--drain-ms + 5 s',
        'stops accepting, answers the requests in flight, drains the worker pool (payouts in flight get --drain-ms, then are handed back)',
      ),
    )
    .action(
      async (
        o: {
          host: string;
          port: number;
          rpc?: string;
          authority?: string[];
          payer?: string;
          pollMs: number;
          commitment: string;
        } & WorkerFlags,
        cmd: Command,
      ) => {
        // Loaded here: fastify + swagger are only needed by this command (keeps the other commands quick to start).
        const { buildApiApp } = await import('./api/build-api-app');
        const log = logger('api');
        const rpc = serveWorkerRpc(o.rpc, o.authority?.[0], cmd.getOptionValueSource('rpc'));
        const stopping = onStopSignals(log, o.drainMs + EXIT_MARGIN_MS); // first: a SIGTERM at any point drains
        const db = createPoolFromEnv({ name: 'payout-serve' });
        // The pool has its own connections: API requests and payouts in flight never wait for each other's.
        const execDb = rpc ? createPoolFromEnv({ max: o.concurrency + 1, name: 'payout-worker' }) : undefined;
        const worker = execDb
          ? startPayoutWorker(workerOptions(execDb, { ...o, rpc: rpc!, authority: o.authority! }))
          : undefined;
        // With --rpc, a new invoice's mint has its decimals read from the chain (once per mint).
        const readMintDecimals = o.rpc ? mintDecimalsFromChain(new Connection(o.rpc, 'finalized')) : undefined;
        const app = await buildApiApp({ db, invoices: { readMintDecimals } });
        const url = await app.listen({ host: o.host, port: o.port });
        log.info({ url, executes: !!worker }, 'merchant API listening');
        process.stdout.write(`${JSON.stringify({ url })}\n`);
        await stopping.stopped;
        await app.close();
        await worker?.stop({ graceMs: o.drainMs });
        await Promise.all([db.end(), execDb?.end()]);
        process.exit(0);
      },
    );

  workerFlagOptions(
    payout
      .command('worker')
      .description(
        'execute due payouts with a bounded pool: each slot claims one payout (FOR UPDATE SKIP LOCKED + its advisory lock) and runs ' +
          'the journal on that same connection; chain trouble hands a payout back with a durable backoff; any number of workers may ' +
          'share a database. It claims only the payouts of the registered merchants whose payout authority (read from their merchant ' +
          'config on chain at start, every --merchants-refresh-ms and after a refusal) is one of the --authority keys, and logs them ' +
          '("payout worker merchants"); a payout refused on chain as Unauthorized (the authority was rotated) is handed back, never ' +
          'failed. On SIGTERM/SIGINT: no new claims, in-flight payouts get --drain-ms to finish, the rest are handed back ' +
          '(an attempt already sent is resolved by the next claim), exit 0 within --drain-ms + 5 s',
      )
      .addOption(rpcOption({ required: true }))
      .requiredOption('--authority <path>', AUTHORITY_HELP, keypairFilesArg('--authority')),
  )
    .option(
      '--metrics-port <port>',
      'serve Prometheus /metrics, /healthz and /readyz on 127.0.0.1:<port> (0 = any free port)',
      intOption('--metrics-port'),
    )
    .addHelpText(
      'after',
      shutdownHelp(
        '--drain-ms + 5 s',
        'stops claiming; payouts in flight get --drain-ms to finish, then are handed back and their open attempts logged',
      ),
    )
    .action(async (o: Omit<ChainOpts, 'timeoutMs'> & WorkerFlags & { metricsPort?: number }) => {
      const log = logger('payout-worker');
      const stopping = onStopSignals(log, o.drainMs + EXIT_MARGIN_MS); // first: a SIGTERM at any point drains
      const db = createPoolFromEnv({ max: o.concurrency + 1, name: 'payout-worker' });
      const worker = startPayoutWorker(workerOptions(db, o));
      const server =
        o.metricsPort === undefined
          ? undefined
          : await serveMetrics({ port: o.metricsPort, registry: metricsRegistry, db });
      if (server) log.info({ url: server.url }, 'serving metrics');
      await stopping.stopped;
      const report = await worker.stop({ graceMs: o.drainMs });
      await server?.close();
      await db.end();
      process.stdout.write(`${JSON.stringify(report)}\n`);
      process.exit(0);
    });
}

/** Default of --drain-ms; and what is added to it for the hard bound on exiting after SIGTERM. */
const DEFAULT_DRAIN_MS = 10_000;
const EXIT_MARGIN_MS = 5_000;

/** The options a worker pool takes, in `payout worker` and `payout serve`. */
function workerFlagOptions(c: Command): Command {
  return c
    .option('--payer <path>', 'keypair file of the fee payer (default: the authority)', keypairFileArg('--payer'))
    .addOption(pollMsOption())
    .addOption(settleCommitmentOption())
    .option(
      '--concurrency <n>',
      'payouts executed at once (each holds one database connection while it runs)',
      intOption('--concurrency', 1),
      4,
    )
    .option('--idle-ms <ms>', 'pause of a slot that found nothing due', intOption('--idle-ms'), 250)
    .option(
      '--blockhash-max-age-ms <ms>',
      'sign the attempts of every slot on one recent blockhash for this long (0: one fetch per attempt)',
      intOption('--blockhash-max-age-ms'),
      DEFAULT_BLOCKHASH_MAX_AGE_MS,
    )
    .option(
      '--max-chain-failures <n>',
      'chain calls failing in a row before a payout is handed back with a backoff',
      intOption('--max-chain-failures', 1),
      10,
    )
    .option(
      '--drain-ms <ms>',
      'on SIGTERM: how long in-flight payouts may take to finish before they are handed back',
      intOption('--drain-ms'),
      DEFAULT_DRAIN_MS,
    )
    .addOption(executorOption())
    .option(
      '--merchants-refresh-ms <ms>',
      'how often the merchants whose payout authority is one of the --authority keys are read again (registry + chain)',
      intOption('--merchants-refresh-ms', 1),
      DEFAULT_MERCHANTS_REFRESH_MS,
    );
}

interface WorkerFlags {
  concurrency: number;
  idleMs: number;
  blockhashMaxAgeMs: number;
  maxChainFailures: number;
  drainMs: number;
  merchantsRefreshMs: number;
}

function workerOptions(
  db: Pool,
  o: Omit<ChainOpts, 'timeoutMs' | 'commitment'> & { commitment?: string } & WorkerFlags,
): PayoutWorkerOptions {
  const { chain, authorities, payer, pollIntervalMs, executor } = chainDeps(db, {
    ...o,
    commitment: o.commitment ?? 'confirmed',
  });
  return {
    db,
    chain,
    authority: authorities,
    merchantsRefreshMs: o.merchantsRefreshMs,
    payer,
    pollIntervalMs,
    concurrency: o.concurrency,
    idleMs: o.idleMs,
    blockhashMaxAgeMs: o.blockhashMaxAgeMs,
    maxChainFailures: o.maxChainFailures,
    executor,
    log: logger('payout-worker'),
  };
}
