// `oncepay payout …`: create, execute, resume, show and derive payouts from the command line (serve and worker:
// cli/payout-serve.ts). Output is JSON on stdout (one object; `--json` keeps it on one line), logs are JSON on stderr.
import { Command, Option } from 'commander';
import { OncepayError } from '../common/errors';
import { PAYOUT_CODES } from '../common/errors/codes';
import { withPoolFromEnv } from '../db/pool';
import { pruneIdempotencyKeys } from '../app/api/idempotency';
import { deriveOperation } from '../app/op-id';
import { createPayout } from '../app/payout/create-payout';
import { executePayout } from '../app/payout/execute-payout';
import { ONCEPAY_PROGRAM_ID } from '../app/program/idl';
import { MerchantRegistration, registerMerchant, resolveMerchant } from '../app/merchant/registry';
import { resumePayouts } from '../app/payout/resume';
import { retryFailedPayouts } from '../app/payout/retry';
import {
  getPayout,
  getPayoutOfMerchantById,
  listAttempts,
  listPayoutsOfMerchant,
  PayoutState,
} from '../app/payout/store';
import { payoutView } from '../app/payout/view';
import { addressOption, amountArg, intOption, merchantRefArg, rowIdArg } from './options';
import { print } from './output';
import { apiKeyFlag, chainDeps, chainOptions, ChainOpts, payoutIdFlag } from './payout-options';
import { registerServe, registerWorker } from './payout-serve';

/** Exit code of `payout execute` when the payout ended failed (a program error such as MerchantPaused) or in conflict. */
export const EXIT_PAYOUT_NOT_PAID = 4;

const PAYOUT_STATES: readonly PayoutState[] = ['pending', 'executing', 'succeeded', 'conflict', 'failed'];

export function register(program: Command): void {
  const payout = program
    .command('payout')
    .description('payouts executed exactly once (op account PDA + attempt journal)');
  for (const add of [opid, merchantAdd, create, execute, resume, show, list, retry, pruneKeys]) add(payout);
  registerServe(payout);
  registerWorker(payout);
}

function opid(payout: Command): void {
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
}

function merchantAdd(payout: Command): void {
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
    .action(async (o: MerchantRegistration & { json?: boolean }) => {
      const { merchant: m, apiKey } = await withPoolFromEnv({}, (db) => registerMerchant(db, o));
      print({ id: m.id, name: m.name, merchant: m.merchantAddress, apiKey }, o.json);
    });
}

function create(payout: Command): void {
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
          const { payoutId, recipient, mint, amount } = o;
          const r = await createPayout(db, m, { payoutId, recipient, mint, amount });
          print({ created: r.created, payout: payoutView(r.row, await listAttempts(db, r.row.id)) }, o.json);
        });
      },
    );
}

function execute(payout: Command): void {
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
      const r = await executePayout(id, { ...chainDeps(db, o), retryFailed: o.retryFailed });
      print(r, o.json);
      if (r && (r.state === 'failed' || r.state === 'conflict')) process.exitCode = EXIT_PAYOUT_NOT_PAID;
    });
  });
}

function resume(payout: Command): void {
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
}

function show(payout: Command): void {
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
}

function list(payout: Command): void {
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
        const payouts = await listPayoutsOfMerchant(db, m.id, { state: o.state, limit: o.limit });
        print(
          payouts.map((p) => payoutView(p, [])),
          o.json,
        );
      });
    });
}

function retry(payout: Command): void {
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
        const reopened = await retryFailedPayouts(db, m, id ?? null, o.merchant);
        print({ merchant: m.merchantAddress, reopened }, o.json);
      });
    });
}

function pruneKeys(payout: Command): void {
  payout
    .command('prune-keys')
    .description('delete completed Idempotency-Keys older than --hours (at least 24)')
    .option('--hours <n>', 'retention in hours (≥ 24)', intOption('--hours'), 24)
    .option('--json', 'one-line JSON output')
    .action(async (o: { hours: number; json?: boolean }) => {
      const deleted = await withPoolFromEnv({}, (db) => pruneIdempotencyKeys(db, o.hours * 3600_000));
      print({ deleted }, o.json);
    });
}
