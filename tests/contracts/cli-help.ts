// The `--help` of every command of the commander tree bin/oncepay builds, as one text: each command's path, then
// exactly what `oncepay <path> --help` prints (commander's help and each addHelpText), at the 80 columns of a
// non-terminal. The environment that shows in a help (a default read from ONCEPAY_CLUSTER, ONCEPAY_GRPC_URL,
// ONCEPAY_WS_URL) is unset first, so the text is the same on every machine.
import { Command } from 'commander';
import { buildCli } from '../../cli/main';

/** Variables whose value a help would show as a default. */
const SHOWN_ENV = ['ONCEPAY_CLUSTER', 'ONCEPAY_GRPC_URL', 'ONCEPAY_WS_URL', 'ONCEPAY_RPC_URL'];

function helpOf(c: Command): string {
  const out: string[] = [];
  c.configureOutput({ writeOut: (s) => void out.push(s), getOutHelpWidth: () => 80 });
  c.outputHelp();
  return out.join('');
}

function walk(c: Command, path: string[], f: (path: string[], c: Command) => void): void {
  f(path, c);
  for (const sub of c.commands) walk(sub, [...path, sub.name()], f);
}

/** `=== oncepay <path> --help` then the help, for the root and every command below it, depth first. */
export function helpOfEveryCommand(): string {
  const saved = SHOWN_ENV.map((k) => [k, process.env[k]] as const);
  for (const k of SHOWN_ENV) delete process.env[k];
  try {
    const parts: string[] = [];
    walk(buildCli(), [], (path, c) => parts.push(`=== ${['oncepay', ...path, '--help'].join(' ')}\n${helpOf(c)}`));
    return parts.join('\n');
  } finally {
    for (const [k, v] of saved) if (v !== undefined) process.env[k] = v;
  }
}
