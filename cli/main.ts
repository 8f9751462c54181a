// `oncepay` — one command line for every part. Each part registers its own commands from `<part>/cli.ts`,
// so this file only lists the parts.
import { Command } from 'commander';
import { CLI_CODES } from '../common/errors/codes';

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

/**
 * A refusal commander prints (a value an option's parser refused, an unknown or missing option) as the one JSON
 * error line every command ends with: `{"level":"error","msg","code","flag"}` — the stable code the parser put in its
 * message (ONCEPAY__…), else ONCEPAY__CLI__USAGE — and the flag or argument it is about.
 */
export function cliErrorLine(text: string): string {
  const msg = text.replace(/^error: /, '').trim();
  const code = /ONCEPAY__[A-Z]+__[A-Z0-9_]+/.exec(msg)?.[0] ?? CLI_CODES.USAGE;
  const flag = /option '(-[-a-zA-Z0-9]+)/.exec(msg)?.[1] ?? /for argument '([^']+)'/.exec(msg)?.[1];
  return `${JSON.stringify({ level: 'error', msg, code, ...(flag ? { flag } : {}) })}\n`;
}

export function buildCli(): Command {
  const program = new Command('oncepay')
    .description('exactly-once payment effects on Solana')
    .showHelpAfterError()
    .enablePositionalOptions()
    // Set before the parts register their commands: each command made afterwards inherits it.
    .configureOutput({ outputError: (text, write) => write(cliErrorLine(text)) });
  for (const load of PARTS) {
    load().register(program);
  }
  return program;
}

if (require.main === module || process.argv[1]?.endsWith('oncepay')) {
  buildCli()
    .parseAsync(process.argv)
    .catch((e: Error) => {
      const { code, context } = e as { code?: string; context?: { flag?: string; field?: string } };
      const flag = context?.flag ?? context?.field;
      process.stderr.write(`${JSON.stringify({ level: 'error', msg: e.message, code, ...(flag ? { flag } : {}) })}\n`);
      process.exit(1);
    });
}
