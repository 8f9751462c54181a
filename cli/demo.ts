// `oncepay demo`: the whole story on embedded defaults (what `make demo` runs). The story lives in demo/.
import { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('demo')
    .description(
      'play the whole story on real components (PostgreSQL, localnet + the compiled program, indexer, outbox, API, SDK) and check exactly-once',
    )
    .option(
      '--keep',
      'leave localnet, the database and the API running afterwards and print how to poke them (Ctrl-C stops)',
    )
    .option(
      '--ci',
      'non-interactive: no progress bars; also print the final result as one JSON line prefixed "DEMO_RESULT "',
    )
    .option('--json', 'print the final result as JSON on stdout (the narration goes to stderr)')
    .addHelpText(
      'after',
      '\nUses DATABASE_URL if set (in a fresh schema), else starts an embedded PostgreSQL under .oncepay/pg-demo.\nExit code 0 when every exactly-once invariant holds, 1 otherwise.',
    )
    .action(async (o: { keep?: boolean; ci?: boolean; json?: boolean }) => {
      // The terminal is the story: the components' JSON logs (this process's and its children's) go to one file
      // per component under the demo's folder, at info unless asked otherwise; the path is printed at the end.
      const { demoLogDir, runDemo } = await import('../demo/run-demo');
      const logDir = demoLogDir();
      process.env.ONCEPAY_LOG_DIR = logDir;
      process.env.ONCEPAY_LOG_LEVEL ??= 'info';
      const code = await runDemo({ keep: o.keep === true, ci: o.ci === true, json: o.json === true, logDir });
      // Keep-alive sockets (fetch) must not hold the process open once everything is stopped.
      process.stdout.write('', () => process.exit(code));
    });
}
