// The flags of the payout commands (cli/payout.ts, cli/payout-serve.ts) and what they are turned into: the chain,
// keys and executor a payout runs with, and a worker pool's options.
import { Command, Option } from 'commander';
import { Connection, Keypair } from '@solana/web3.js';
import { Pool } from 'pg';
import { CLI_CODES, PAYOUT_CODES } from '../common/errors/codes';
import { logger } from '../common/log';
import { createConnectionChain } from '../app/payout/chain';
import { EXECUTOR_NAMES, executorNamed } from '../app/payout/executor';
import { readKeypairFile } from '../app/payout/keypair';
import { RunPayoutDeps } from '../app/payout/run-payout';
import { DEFAULT_BLOCKHASH_MAX_AGE_MS, DEFAULT_MERCHANTS_REFRESH_MS, PayoutWorkerOptions } from '../app/payout/worker';
import { isPayoutId, PAYOUT_ID_MAX_BYTES } from '../app/types';
import {
  intOption,
  invalidFlag,
  keypairFileArg,
  keypairFilesArg,
  pollMsOption,
  rpcOption,
  timeoutMsOption,
} from './options';

/** --commitment: at which an attempt counts as landed (a value outside the two was silently taken as confirmed). */
export function settleCommitmentOption(): Option {
  return new Option('--commitment <level>', 'commitment at which an attempt counts as landed')
    .choices(['confirmed', 'finalized'])
    .default('confirmed');
}

export interface ChainOpts {
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
export function payoutIdFlag(name: string): (v: string) => string {
  return (v) => {
    if (isPayoutId(v)) return v;
    throw invalidFlag(
      PAYOUT_CODES.ID_MALFORMED,
      `${name} must be 1–${PAYOUT_ID_MAX_BYTES} bytes of UTF-8 without control characters, got ${JSON.stringify(v)}`,
    );
  };
}

/** An API key flag: 16–512 visible ASCII characters (the Bearer token's rule); never echoed. */
export function apiKeyFlag(name: string): (v: string) => string {
  return (v) => {
    if (/^[\x21-\x7e]{16,512}$/.test(v)) return v;
    throw invalidFlag(CLI_CODES.VALUE_INVALID, `${name} must be 16–512 visible ASCII characters`);
  };
}

/** The chain, keys and executor of the chain flags: what runPayout, resumePayouts and a worker pool run with. */
export function chainDeps(db: Pool, o: ChainOpts): RunPayoutDeps & { authorities: Keypair[] } {
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

export const AUTHORITY_HELP =
  "keypair file (JSON array of 64 bytes) of a merchant's payout authority; repeat it for several merchants: each payout is signed with its merchant's own (read from the merchant config on chain), and payouts of merchants whose payout authority is none of these are not touched";

/** --rpc, --authority, --payer, --poll-ms, --timeout-ms, --commitment, --executor, --json: `execute` and `resume`. */
export function chainOptions(c: Command): Command {
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

/** Default of --drain-ms; and what is added to it for the hard bound on exiting after SIGTERM. */
export const DEFAULT_DRAIN_MS = 10_000;
export const EXIT_MARGIN_MS = 5_000;

/** The options a worker pool takes, in `payout worker` and `payout serve`. */
export function workerFlagOptions(c: Command): Command {
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

export interface WorkerFlags {
  concurrency: number;
  idleMs: number;
  blockhashMaxAgeMs: number;
  maxChainFailures: number;
  drainMs: number;
  merchantsRefreshMs: number;
}

/** A worker pool's options from its flags. */
export function workerOptions(
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
