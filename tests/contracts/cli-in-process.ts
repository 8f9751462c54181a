// `oncepay …` run in this process, on the same commander tree bin/oncepay builds, with every command's exit turned
// into a thrown error (commander's exitOverride, set on each command: it is not inherited by commands made before
// it is set) and its output captured. A refusal comes back as an error with the stable code the CLI printed: the
// OncepayError's own `code`, or, for a value refused at parse time, the ONCEPAY__… code commander's message
// starts its reason with.
import { Command, CommanderError } from 'commander';
import { buildCli, cliRefusal } from '../../cli/main';

export interface CliRefusal extends Error {
  /** ONCEPAY__<AREA>__<WHAT>: the CLI's own refusal code (cli/main.ts cliRefusal) or the OncepayError's. */
  code: string;
  /** The flag or argument it names (commander's refusals; an OncepayError's context.flag or context.field). */
  flag?: string;
  /** What the CLI printed on stderr for it (commander's line), if anything. */
  stderr: string;
}

function eachCommand(c: Command, f: (c: Command) => void): void {
  f(c);
  for (const sub of c.commands) eachCommand(sub, f);
}

/** Run `args`; resolves with stdout, or rejects with a CliRefusal. */
export async function runCli(args: string[]): Promise<string> {
  const out: string[] = [];
  const err: string[] = [];
  const program = buildCli();
  eachCommand(program, (c) =>
    c.exitOverride().configureOutput({ writeOut: (s) => void out.push(s), writeErr: (s) => void err.push(s) }),
  );
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    await program.parseAsync(['node', 'oncepay', ...args]);
  } catch (e) {
    const stderr = err.join('');
    if (e instanceof CommanderError) throw Object.assign(new Error(e.message), { ...cliRefusal(e.message), stderr });
    const context = (e as { context?: { flag?: string; field?: string } }).context;
    throw Object.assign(e as Error, { stderr, flag: context?.flag ?? context?.field }) as CliRefusal;
  } finally {
    process.stdout.write = write;
  }
  return out.join('');
}
