// `oncepay payout …`: create, execute, resume, show and derive payouts from the command line. Output is JSON on
// stdout (one object; `--json` keeps it on one line), logs are JSON on stderr.
import * as crypto from 'crypto';
import { Command } from 'commander';
import { Connection } from '@solana/web3.js';
import { Pool } from 'pg';
import { createPoolFromEnv, withPoolFromEnv } from '../db/pool';
import { OncepayError } from '../common/errors';
import { logger } from '../common/log';
import { onStopSignals, shutdownHelp } from '../common/shutdown';
import { hashApiKey } from './api/api-key-auth';
import { pruneIdempotencyKeys } from './api/idempotency';
import { MERCHANT_NOT_FOUND, OPTION_INVALID, PAYOUT_ABORTED, PAYOUT_NOT_FOUND } from './codes';
import { deriveOperation } from './op-id';
import { createConnectionChain } from './payout/chain';
import { createPayout } from './payout/create-payout';
import { ExecuteDeps, executePayout } from './payout/execute-payout';
import { readKeypairFile } from './payout/keypair';
import { ONCEPAY_PROGRAM_ID } from './payout/program';
import { getMerchant, getMerchantByAddress, getPayout, insertMerchant, listAttempts } from './payout/queries';
import { resumePayouts } from './payout/resume';
import { payoutView } from './payout/view';
import { address } from './types';


function print(x: unknown, json?: boolean): void {
  process.stdout.write(`${JSON.stringify(x, null, json ? undefined : 2)}\n`);
}

interface ChainOpts {
  rpc: string;
  authority: string;
  payer?: string;
  pollMs: string;
  timeoutMs?: string;
  commitment: string;
}

function chainDeps(db: Pool, o: Omit<ChainOpts, 'timeoutMs'> & { timeoutMs?: string }): ExecuteDeps {
  const connection = new Connection(o.rpc, { commitment: 'confirmed', disableRetryOnRateLimit: true });
  const signal = o.timeoutMs ? AbortSignal.timeout(Number(o.timeoutMs)) : undefined;
  return {
    db,
    chain: createConnectionChain({ connection, settleCommitment: o.commitment === 'finalized' ? 'finalized' : 'confirmed' }),
    authority: readKeypairFile(o.authority),
    payer: o.payer ? readKeypairFile(o.payer) : undefined,
    pollIntervalMs: Number(o.pollMs),
    signal,
    log: logger('payout'),
  };
}

function chainOptions(c: Command): Command {
  return c
    .requiredOption('--rpc <url>', 'Solana JSON-RPC endpoint')
    .requiredOption('--authority <path>', "keypair file (JSON array of 64 bytes) of the merchant's payout authority")
    .option('--payer <path>', 'keypair file of the fee payer (default: the authority)')
    .option('--poll-ms <ms>', 'pause between two looks at the chain', '400')
    .option('--timeout-ms <ms>', 'give up after this long (the journal keeps every attempt; resume later)')
    .option('--commitment <level>', 'commitment at which an attempt counts as landed: confirmed | finalized', 'confirmed')
    .option('--json', 'one-line JSON output');
}

export function register(program: Command): void {
  const payout = program.command('payout').description('payouts executed exactly once (op account PDA + attempt journal)');

  payout
    .command('opid')
    .description('derive the op_id and op account of a payout: {"opId","opPda"}')
    .option('--program <address>', 'oncepay program id', ONCEPAY_PROGRAM_ID)
    .requiredOption('--merchant <address>', 'merchant config account (PDA ["merchant", merchant_authority])')
    .requiredOption('--payout-id <id>', "the merchant's payout id (UTF-8)")
    .action((o: { program: string; merchant: string; payoutId: string }) => {
      const d = deriveOperation({ programId: o.program, merchant: o.merchant, payoutId: o.payoutId });
      print({ opId: d.opId, opPda: d.opPda }, true);
    });

  payout
    .command('merchant-add')
    .description('register a merchant for the API; prints its id and API key (shown once, stored hashed)')
    .requiredOption('--name <name>', 'display name')
    .option('--program <address>', 'oncepay program id', ONCEPAY_PROGRAM_ID)
    .requiredOption('--merchant <address>', 'merchant config account')
    .requiredOption('--vault <address>', 'token account owned by the merchant PDA that payouts are paid from')
    .option('--token-program <address>', 'SPL Token (default) or Token-2022 program id')
    .option('--api-key <key>', 'use this API key instead of a generated one (≥ 16 visible ASCII characters)')
    .option('--json', 'one-line JSON output')
    .action(async (o: { name: string; program: string; merchant: string; vault: string; tokenProgram?: string; apiKey?: string; json?: boolean }) => {
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
        }),
      );
      print({ id: m.id, name: m.name, merchant: m.merchantAddress, apiKey }, o.json);
    });

  payout
    .command('create')
    .description('store a payout row (idempotent on --payout-id); prints the payout')
    .requiredOption('--merchant <address|id>', 'merchant config account, or the api_merchants id')
    .requiredOption('--payout-id <id>', "the merchant's payout id")
    .requiredOption('--recipient <address>', 'recipient token account')
    .requiredOption('--mint <address>', 'token mint')
    .requiredOption('--amount <base units>', 'amount in base units (decimal string)')
    .option('--json', 'one-line JSON output')
    .action(async (o: { merchant: string; payoutId: string; recipient: string; mint: string; amount: string; json?: boolean }) => {
      await withPoolFromEnv({}, async (db) => {
        const m = /^[0-9]+$/.test(o.merchant) ? await getMerchant(db, o.merchant) : await getMerchantByAddress(db, o.merchant);
        if (!m) throw new OncepayError(MERCHANT_NOT_FOUND, `no merchant ${o.merchant}; add it with \`oncepay payout merchant-add\``);
        const r = await createPayout(db, m, { payoutId: o.payoutId, recipient: o.recipient, mint: o.mint, amount: o.amount });
        print({ created: r.created, payout: payoutView(r.row, await listAttempts(db, r.row.id)) }, o.json);
      });
    });

  chainOptions(
    payout
      .command('execute')
      .description('execute one payout (or finish executing it): persists each attempt before sending, then resolves it')
      .argument('<id>', 'payout id (the row id printed by create)')
      .option('--retry-failed', 're-open a payout whose attempt failed with a program error'),
  ).action(async (id: string, o: ChainOpts & { json?: boolean; retryFailed?: boolean }) => {
    await withPoolFromEnv({}, async (db) => {
      const p = await getPayout(db, id);
      if (!p) throw new OncepayError(PAYOUT_NOT_FOUND, `payout ${id} not found`);
      const r = await executePayout(p, { ...chainDeps(db, o), retryFailed: o.retryFailed });
      print(r, o.json);
    });
  });

  chainOptions(
    payout
      .command('resume')
      .description('resolve every payout left with an uncertain attempt (after a crash); --include-pending also starts pending ones')
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
    .argument('<id>', 'payout row id')
    .option('--json', 'one-line JSON output')
    .action(async (id: string, o: { json?: boolean }) => {
      await withPoolFromEnv({}, async (db) => {
        const p = await getPayout(db, id);
        if (!p) throw new OncepayError(PAYOUT_NOT_FOUND, `payout ${id} not found`);
        print(payoutView(p, await listAttempts(db, p.id)), o.json);
      });
    });

  payout
    .command('prune-keys')
    .description('delete completed Idempotency-Keys older than --hours (at least 24)')
    .option('--hours <n>', 'retention in hours (≥ 24)', '24')
    .option('--json', 'one-line JSON output')
    .action(async (o: { hours: string; json?: boolean }) => {
      const deleted = await withPoolFromEnv({}, (db) => pruneIdempotencyKeys(db, Number(o.hours) * 3600_000));
      print({ deleted }, o.json);
    });

  payout
    .command('serve')
    .description('serve the merchant API (POST /v1/payouts, GET /v1/payouts/:id, /openapi.json, /metrics); with --rpc and --authority it also executes payouts')
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'port (0: any free port)', '8080')
    .option('--rpc <url>', 'Solana JSON-RPC endpoint: execute each created payout (and resume unfinished ones at start)')
    .option('--authority <path>', "keypair file of the merchant's payout authority (with --rpc)")
    .option('--payer <path>', 'keypair file of the fee payer (default: the authority)')
    .option('--poll-ms <ms>', 'pause between two looks at the chain', '400')
    .option('--commitment <level>', 'confirmed | finalized', 'confirmed')
    .addHelpText('after', '\nGET /healthz (alive) and GET /readyz (database reachable, migrations applied). While the database is away requests get 503 + Retry-After ({code: "DATABASE_UNAVAILABLE"}).')
    .addHelpText('after', shutdownHelp(undefined, 'stops accepting and answers the requests in flight'))
    .action(async (o: { host: string; port: string; rpc?: string; authority?: string; payer?: string; pollMs: string; commitment: string }) => {
      // Loaded here: fastify + swagger are only needed by this command (keeps the other commands quick to start).
      const { buildApiApp } = require('./api/build-api-app') as typeof import('./api/build-api-app');
      const log = logger('api');
      const db = createPoolFromEnv({ name: 'payout-serve' });
      const stopping = onStopSignals(log);
      let exec: ExecuteDeps | undefined;
      if (o.rpc && o.authority) {
        exec = { ...chainDeps(db, { rpc: o.rpc, authority: o.authority, payer: o.payer, pollMs: o.pollMs, commitment: o.commitment }), signal: stopping.signal, lock: 'skip' };
      } else if (o.rpc || o.authority) {
        throw new OncepayError(OPTION_INVALID, '--rpc and --authority go together');
      }
      const quiet = (e: unknown) => {
        if (!(e instanceof OncepayError && e.code === PAYOUT_ABORTED)) log.error({ err: (e as Error).message }, 'payout execution failed');
      };
      const app = await buildApiApp({ db, onPayoutCreated: exec ? (row) => void executePayout(row, exec!).catch(quiet) : undefined });
      const url = await app.listen({ host: o.host, port: Number(o.port) });
      log.info({ url, executes: !!exec }, 'merchant API listening');
      process.stdout.write(`${JSON.stringify({ url })}\n`);
      if (exec) void resumePayouts({ ...exec, includePending: true }).catch(quiet);
      // Stop accepting, answer the requests in flight, then close the pool.
      await stopping.stopped;
      await app.close();
      await db.end();
      process.exit(0);
    });
}
