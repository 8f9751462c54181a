// `oncepay` — one command line for every part. Each command group registers itself from its own file in cli/ (the
// local chain's from localnet/cli.ts), so this file only lists them, in the order `oncepay --help` shows.
import { Command } from 'commander';
import { CLI_CODES } from '../common/errors/codes';
import { redactUrlsIn, urlCarriesSecret } from '../common/redact';
import { logger } from '../common/log';

// Each part is required when buildCli() runs, not when this file is imported (importing it, as tests do, stays cheap).
// A part with `sourceOnly` (its module, checked without loading it) is a command of a source checkout only: the local
// chain and the demo need the development toolchain (LiteSVM, the compiled programs under target/, PostgreSQL's
// server binaries), so their modules are not in the npm package and the installed `oncepay` does not list them (its
// --help says where they are).
/* eslint-disable @typescript-eslint/no-require-imports -- lazy loading, see above */
const PARTS: Array<{
  load: () => { register(program: Command): void };
  sourceOnly?: { name: string; module: string };
}> = [
  { load: () => require('./db') },
  { load: () => require('./decode') },
  { load: () => require('./invoice') },
  { load: () => require('./report') },
  { load: () => require('./outbox') },
  { load: () => require('./indexer') },
  { load: () => require('../localnet/cli'), sourceOnly: { name: 'localnet', module: '../localnet/index' } },
  { load: () => require('./payout') },
  { load: () => require('./merchant') },
  { load: () => require('./vault') },
  { load: () => require('./exception') },
  { load: () => require('./operator') },
  { load: () => require('./demo'), sourceOnly: { name: 'demo', module: '../demo/run-demo' } },
];
/* eslint-enable @typescript-eslint/no-require-imports */

/** Whether a module ships with this copy of oncepay (a source checkout, or a build of one), without loading it. */
function present(module: string): boolean {
  try {
    require.resolve(module);
    return true;
  } catch {
    return false;
  }
}

/**
 * A refusal commander prints (a value an option's parser refused, an unknown or missing option) as the one JSON
 * error line every command ends with: `{"level":"error","msg","code","flag"}` — the stable code the parser put in its
 * message (ONCEPAY__…), else ONCEPAY__CLI__USAGE — and the flag or argument it is about.
 */
export function cliErrorLine(text: string): string {
  // Commander quotes the refused value: a URL in it may carry a key.
  const msg = redactUrlsIn(text.replace(/^error: /, '').trim());
  const { code, flag } = cliRefusal(msg);
  return `${JSON.stringify({ level: 'error', msg, code, ...(flag ? { flag } : {}) })}\n`;
}

/**
 * The stable code and the flag (or argument) of a refusal commander worded: the ONCEPAY__… code our parsers start
 * their reason with; else VALUE_INVALID for a value commander itself refused (a choice), USAGE for the rest.
 */
export function cliRefusal(message: string): { code: string; flag?: string } {
  const code =
    /ONCEPAY__[A-Z]+__[A-Z0-9_]+/.exec(message)?.[0] ??
    (/argument '.*' is invalid|value '.*' is invalid/s.test(message) ? CLI_CODES.VALUE_INVALID : CLI_CODES.USAGE);
  const flag = /option '(-[-a-zA-Z0-9]+)/.exec(message)?.[1] ?? /for argument '([^']+)'/.exec(message)?.[1];
  return { code, ...(flag ? { flag } : {}) };
}

/**
 * Flags whose value is a credential, by command: each has a way in that `ps` does not show (a file, the environment,
 * or leaving it out). `indexer webhook --secret` and `indexer stream --x-token` warn in their own commands.
 */
const SECRET_FLAGS: Record<string, Record<string, string>> = {
  'payout merchant-add': { apiKey: 'leave --api-key out: a key is generated and printed once' },
  'outbox run': { secret: 'use ONCEPAY_WEBHOOK_SECRET or the stored webhook_endpoints.secret' },
  'outbox set-endpoint': { secret: 'run it where no other user can list processes, then rotate if in doubt' },
};

/** The environment variable a URL flag also reads (a way in that `ps` does not show). */
const URL_FLAG_ENV: Record<string, string> = {
  rpc: 'ONCEPAY_RPC_URL',
  grpc: 'ONCEPAY_GRPC_URL',
  ws: 'ONCEPAY_WS_URL',
};

/**
 * Warn (once per flag, at start) when a secret came in on the command line, where every user of the machine sees
 * it in `ps`: a credential flag, or a URL flag whose value carries a password, a query (an API key) or a key in its
 * path. The value itself is never printed.
 */
export function warnSecretsOnCommandLine(cmd: Command, path: string, warn: (o: object, msg: string) => void): void {
  const secretFlags = SECRET_FLAGS[path] ?? {};
  for (const o of cmd.options) {
    const key = o.attributeName();
    if (cmd.getOptionValueSource(key) !== 'cli') continue;
    const v = cmd.getOptionValue(key) as unknown;
    const why = secretFlags[key];
    if (why) warn({ flag: o.long }, `${o.long} is visible to every user of this machine (ps): ${why}`);
    else if (typeof v === 'string' && v.includes('://') && urlCarriesSecret(v)) {
      const env = URL_FLAG_ENV[key];
      warn(
        { flag: o.long },
        `${o.long} carries a credential (userinfo, a query or a key in its path) visible to every user of this machine (ps)${env ? `: put the URL in ${env} instead` : ''}`,
      );
    }
  }
}

export function buildCli(): Command {
  const program = new Command('oncepay')
    .description('exactly-once payment effects on Solana')
    .showHelpAfterError()
    .enablePositionalOptions()
    // Set before the parts register their commands: each command made afterwards inherits it.
    .configureOutput({ outputError: (text, write) => write(cliErrorLine(text)) });
  const missing: string[] = [];
  for (const part of PARTS) {
    if (part.sourceOnly && !present(part.sourceOnly.module)) missing.push(part.sourceOnly.name);
    else part.load().register(program);
  }
  if (missing.length > 0)
    program.addHelpText(
      'after',
      `\nNot in the installed package: ${missing.join(', ')} (they need the development toolchain: a source checkout of oncepay runs them, e.g. \`make demo\`).`,
    );
  program.hook('preAction', (_root, action) => {
    const names: string[] = [];
    for (let c: Command | null = action; c && c !== program; c = c.parent) names.unshift(c.name());
    const log = logger('cli');
    warnSecretsOnCommandLine(action, names.join(' '), (o, msg) => log.warn(o, msg));
  });
  return program;
}

if (require.main === module || process.argv[1]?.endsWith('oncepay')) {
  buildCli()
    .parseAsync(process.argv)
    .catch((e: Error) => {
      const { code, context } = e as { code?: string; context?: { flag?: string; field?: string } };
      const flag = context?.flag ?? context?.field;
      const msg = redactUrlsIn(e.message); // an error may quote an endpoint's URL
      process.stderr.write(`${JSON.stringify({ level: 'error', msg, code, ...(flag ? { flag } : {}) })}\n`);
      process.exit(1);
    });
}
