// `oncepay invoice create`: an invoice the ledger credits (idempotent on its id).
import { Command } from 'commander';
import { baseUnits } from '../common/amount';
import { withPoolFromEnv } from '../db/pool';
import { createLedger } from '../indexer/ledger';
import { addressArg, amountArg, mintArg } from './options';
import { print } from './output';
import { withSchemaHint } from './schema-hint';

export function register(program: Command): void {
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
            const { created, invoice } = await createLedger({ db }).createInvoice({
              id: o.id,
              mint: o.mint,
              expectedAmount: baseUnits(o.amount),
              depositAddress: o.depositAddress ?? null,
              referenceKey: o.reference ?? null,
              merchant: o.merchant,
            });
            print({ created, invoice }, true);
          });
        },
      ),
    );
}
