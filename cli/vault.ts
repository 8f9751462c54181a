// `oncepay vault create|check`: the merchant PDA's token account for a mint, and what its settings mean.
import { Command } from 'commander';
import { readKeypairFile } from '../app/payout/keypair';
import { addressOption, keypairFileArg } from './options';
import { ChainFlags, chainFlags, withOncePay } from './chain-flags';
import { print } from './output';

/** Exit code of `vault check` when a finding is a danger. */
export const EXIT_VAULT_DANGER = 2;

export function register(program: Command): void {
  const vault = program
    .command('vault')
    .description("the merchant's vaults (token accounts owned by the merchant PDA)");

  chainFlags(
    vault
      .command('create')
      .description(
        "create the merchant PDA's associated token account for --mint (SPL Token or Token-2022); idempotent",
      )
      .addOption(addressOption('--merchant <address>', 'merchant config PDA').makeOptionMandatory())
      .addOption(addressOption('--mint <address>', 'token mint').makeOptionMandatory())
      .requiredOption('--payer <keypair>', 'rent and fee payer keypair file', keypairFileArg('--payer')),
  ).action(async (o: ChainFlags & { merchant: string; mint: string; payer: string }) => {
    print(
      await withOncePay(o, (op) =>
        op.createVault({ payer: readKeypairFile(o.payer), merchant: o.merchant, mint: o.mint }),
      ),
      o.json,
    );
  });

  chainFlags(
    vault
      .command('check')
      .description(
        'flag what lets someone else move or lock the vault, or breaks payouts: delegates, close authority, permanent delegate, transfer fee, transfer hook, default-frozen accounts, freeze authority (exit 2 on a danger)',
      )
      .addOption(addressOption('--merchant <address>', 'merchant config PDA').makeOptionMandatory())
      .addOption(addressOption('--mint <address>', "check the merchant's vault for this mint"))
      .addOption(addressOption('--vault <address>', 'or this token account')),
  ).action(async (o: ChainFlags & { merchant: string; mint?: string; vault?: string }) => {
    const r = await withOncePay(o, (op) => op.checkVault({ merchant: o.merchant, mint: o.mint, vault: o.vault }));
    print(r, o.json);
    if (!r.ok) process.exitCode = EXIT_VAULT_DANGER;
  });
}
