// `oncepay operator add <name>`: an operator of the console (/console/ of `oncepay payout serve`). The password is
// read from stdin with --password-stdin (so it is in no `ps` and no shell history), or generated and printed once.
import { Command } from 'commander';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export function register(program: Command): void {
  const operator = program.command('operator').description('operators of the console (/console/ of payout serve)');
  operator
    .command('add')
    .description(
      'add a console operator; prints {"name","password"} once when the password is generated (stored only as a scrypt hash)',
    )
    .argument('<name>', 'operator name: 1–64 of a-z 0-9 . _ -')
    .option('--password-stdin', 'read the password (≥ 12 characters) from stdin instead of generating one')
    .option('--reset', 'set a new password of an existing operator (and lift its login lock)')
    .action(async (name: string, o: { passwordStdin?: boolean; reset?: boolean }) => {
      const { withPoolFromEnv } = await import('../db/pool');
      const { addConsoleOperator } = await import('../app/console/operators');
      const password = o.passwordStdin ? await readStdin() : undefined;
      const r = await withPoolFromEnv({ max: 1, name: 'operator-add' }, (db) =>
        addConsoleOperator(db, name, { password, reset: o.reset === true }),
      );
      process.stdout.write(
        `${JSON.stringify({ name: r.name, ...(r.generatedPassword ? { password: r.generatedPassword } : {}) })}\n`,
      );
    });
}
