// `oncepay exception list|show|refund|resolve`: the money the indexer kept as exceptions, settled exactly once.
import { Command, InvalidArgumentError } from 'commander';
import { readKeypairFile } from '../app/payout/keypair';
import { EXCEPTION_KINDS } from '../indexer/match/types';
import { EXCEPTION_STATES, ExceptionKind, ExceptionState } from '../app/exception/types';
import { addressOption, keypairFileArg, keypairFilesArg, merchantRefArg, rowIdArg, timeoutMsOption } from './options';
import { ChainFlags, chainFlags, withOncePay } from './chain-flags';
import { print } from './output';

function oneOf<T extends string>(name: string, values: readonly T[]) {
  return (v: string): T => {
    if (!(values as readonly string[]).includes(v))
      throw new InvalidArgumentError(`${name} must be one of ${values.join(', ')}`);
    return v as T;
  };
}

const MERCHANT_SCOPE =
  "only this merchant's exceptions (api_merchants id or merchant config address): the money arrived in its vault, it is about its API invoice, or it refunded it";

export function register(program: Command): void {
  const exception = program
    .command('exception')
    .description('ledger exceptions (overpayments, late payments, unknown references…): list, refund once, resolve');
  for (const add of [list, show, refund, resolve]) add(exception);
}

function list(exception: Command): void {
  chainFlags(
    exception
      .command('list')
      .description('exceptions with their state (open, refunding, refunded, refund_failed, resolved) and refund proof')
      .option('--kind <kind>', EXCEPTION_KINDS.join(' | '), oneOf('--kind', EXCEPTION_KINDS))
      .option('--invoice <id>', 'only this invoice')
      .option('--state <state>', EXCEPTION_STATES.join(' | '), oneOf('--state', EXCEPTION_STATES))
      .option('--merchant <address|id>', MERCHANT_SCOPE, merchantRefArg('--merchant')),
    false,
  ).action(
    async (o: ChainFlags & { kind?: ExceptionKind; invoice?: string; state?: ExceptionState; merchant?: string }) => {
      print(
        await withOncePay(o, (op) =>
          op.listExceptions({ kind: o.kind, invoiceId: o.invoice, state: o.state, merchant: o.merchant }),
        ),
        o.json,
      );
    },
  );
}

function show(exception: Command): void {
  chainFlags(
    exception
      .command('show')
      .description('one exception, its receipt, and its refund or resolution')
      .argument('<id>', 'exception id', rowIdArg('<id>'))
      .option('--merchant <address|id>', MERCHANT_SCOPE, merchantRefArg('--merchant')),
    false,
  ).action(async (id: string, o: ChainFlags & { merchant?: string }) => {
    print(await withOncePay(o, (op) => op.getException(id, { merchant: o.merchant })), o.json);
  });
}

function refund(exception: Command): void {
  chainFlags(
    exception
      .command('refund')
      .description(
        "pay the exception's amount back to the sender's token account (or --to), exactly once: the refund payout's id is refund:<cluster>:<signature>:<ix>:<inner>; running it again finishes the same refund",
      )
      .argument('<id>', 'exception id', rowIdArg('<id>'))
      .requiredOption(
        '--authority <keypair>',
        "keypair file of the paying merchant's payout authority (repeatable: the one the merchant's config names signs)",
        keypairFilesArg('--authority'),
      )
      .option('--payer <keypair>', 'fee payer keypair file (default: the authority)', keypairFileArg('--payer'))
      .addOption(addressOption('--to <address>', "refund to this token account instead of the sender's"))
      .option(
        '--merchant <address|id>',
        "the paying merchant, and the scope: its own exceptions and those of no registered merchant (another merchant's is not found). Default: the registered merchant whose vault received the money",
        merchantRefArg('--merchant'),
      )
      .addOption(timeoutMsOption('stop waiting after this long (run the command again to finish)'))
      .option('--retry-failed', 're-open a refund that failed with a program error (e.g. after topping up the vault)'),
  ).action(
    async (
      id: string,
      o: ChainFlags & {
        authority: string[];
        payer?: string;
        to?: string;
        merchant?: string;
        timeoutMs?: number;
        retryFailed?: boolean;
      },
    ) => {
      const r = await withOncePay(o, (op) =>
        op.refundException(id, {
          authority: o.authority.map((f) => readKeypairFile(f)),
          payer: o.payer ? readKeypairFile(o.payer) : undefined,
          to: o.to,
          merchant: o.merchant,
          signal: o.timeoutMs === undefined ? undefined : AbortSignal.timeout(o.timeoutMs),
          retryFailed: o.retryFailed,
        }),
      );
      print(r, o.json);
    },
  );
}

function resolve(exception: Command): void {
  chainFlags(
    exception
      .command('resolve')
      .description('close an exception without moving money (idempotent; refused once it has a refund)')
      .argument('<id>', 'exception id', rowIdArg('<id>'))
      .requiredOption('--note <text>', 'why (kept with the exception)')
      .option('--merchant <address|id>', MERCHANT_SCOPE, merchantRefArg('--merchant')),
    false,
  ).action(async (id: string, o: ChainFlags & { note: string; merchant?: string }) => {
    print(await withOncePay(o, (op) => op.resolveException(id, o.note, { merchant: o.merchant })), o.json);
  });
}
