// `oncepay merchant init|show|pause|unpause|set-payout-authority`: the merchant config on-chain.
import { Command } from 'commander';
import { OncepayError } from '../common/errors';
import { addressOption, keypairFileArg } from './options';
import { PAYOUT_CODES } from '../common/errors/codes';
import { readKeypairFile } from '../app/payout/keypair';
import { ChainFlags, chainFlags, withOncePay } from './chain-flags';
import { print } from './output';

/** Exit code of `merchant init` when the existing config has another payout authority than asked. */
export const EXIT_MERCHANT_MISMATCH = 3;

export function register(program: Command): void {
  const merchant = program
    .command('merchant')
    .description("the merchant's on-chain config: create it, read it, pause, rotate the payout authority");
  for (const add of [init, show, pauseAndUnpause, setPayoutAuthority]) add(merchant);
}

function init(merchant: Command): void {
  chainFlags(
    merchant
      .command('init')
      .description(
        'initialize_merchant (idempotent: a second run reports the existing config and whether it matches; exit 3 when it does not)',
      )
      .requiredOption(
        '--authority <keypair>',
        'merchant authority keypair file (Solana CLI JSON; chmod 600)',
        keypairFileArg('--authority'),
      )
      .addOption(addressOption('--payout-authority <pubkey>', 'who signs payouts').makeOptionMandatory())
      .option(
        '--payer <keypair>',
        'fee and rent payer keypair file (default: the authority)',
        keypairFileArg('--payer'),
      ),
  ).action(async (o: ChainFlags & { authority: string; payoutAuthority: string; payer?: string }) => {
    const r = await withOncePay(o, (op) =>
      op.initMerchant({
        authority: readKeypairFile(o.authority),
        payoutAuthority: o.payoutAuthority,
        payer: o.payer ? readKeypairFile(o.payer) : undefined,
      }),
    );
    print(r, o.json);
    if (!r.matches) process.exitCode = EXIT_MERCHANT_MISMATCH;
  });
}

function show(merchant: Command): void {
  chainFlags(
    merchant
      .command('show')
      .description('the merchant config: authorities, paused')
      .addOption(addressOption('--merchant <address>', 'merchant config PDA'))
      .addOption(addressOption('--merchant-authority <pubkey>', 'or the merchant authority whose PDA to read')),
  ).action(async (o: ChainFlags & { merchant?: string; merchantAuthority?: string }) => {
    await withOncePay(o, async (op) => {
      const address =
        o.merchant ?? (o.merchantAuthority ? op.merchantAddress(o.merchantAuthority).toBase58() : undefined);
      if (!address)
        throw new OncepayError(PAYOUT_CODES.OPTION_INVALID, 'give --merchant or --merchant-authority', {
          flag: '--merchant',
        });
      const account = await op.getMerchant(address);
      print({ merchant: address, exists: account !== null, account }, o.json);
    });
  });
}

function pauseAndUnpause(merchant: Command): void {
  for (const [name, paused] of [
    ['pause', true],
    ['unpause', false],
  ] as const) {
    chainFlags(
      merchant
        .command(name)
        .description(
          paused
            ? 'set_paused(true): every payout fails with MerchantPaused until unpause'
            : 'set_paused(false): payouts run again',
        )
        .requiredOption('--authority <keypair>', 'merchant authority keypair file', keypairFileArg('--authority')),
    ).action(async (o: ChainFlags & { authority: string }) => {
      print(await withOncePay(o, (op) => op.setPaused(readKeypairFile(o.authority), paused)), o.json);
    });
  }
}

function setPayoutAuthority(merchant: Command): void {
  chainFlags(
    merchant
      .command('set-payout-authority')
      .description('set_payout_authority: from now on only this key signs payouts')
      .requiredOption('--authority <keypair>', 'merchant authority keypair file', keypairFileArg('--authority'))
      .addOption(addressOption('--payout-authority <pubkey>', 'the new payout authority').makeOptionMandatory()),
  ).action(async (o: ChainFlags & { authority: string; payoutAuthority: string }) => {
    print(await withOncePay(o, (op) => op.setPayoutAuthority(readKeypairFile(o.authority), o.payoutAuthority)), o.json);
  });
}
