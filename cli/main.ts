// `oncepay` — one command line for every part. Each part registers its own commands from `<part>/cli.ts`,
// so this file only lists the parts.
import { Command } from 'commander';

// Each part is required when buildCli() runs, not when this file is imported (importing it, as tests do, stays cheap).
/* eslint-disable @typescript-eslint/no-require-imports -- lazy loading, see above */
const PARTS: Array<() => { register(program: Command): void }> = [
  () => require('../db/cli'),
  () => require('../indexer/cli'),
  () => require('../localnet/cli'),
  () => require('../app/cli'),
  () => require('../sdk/cli'),
  () => require('./demo'),
];
/* eslint-enable @typescript-eslint/no-require-imports */

export function buildCli(): Command {
  const program = new Command('oncepay')
    .description('exactly-once payment effects on Solana')
    .showHelpAfterError()
    .enablePositionalOptions();
  for (const load of PARTS) {
    load().register(program);
  }
  return program;
}

if (require.main === module || process.argv[1]?.endsWith('oncepay')) {
  buildCli()
    .parseAsync(process.argv)
    .catch((e: Error) => {
      process.stderr.write(
        `${JSON.stringify({ level: 'error', msg: e.message, code: (e as { code?: string }).code })}\n`,
      );
      process.exit(1);
    });
}
