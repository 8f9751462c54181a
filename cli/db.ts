// `oncepay migrate` and `oncepay db start|stop|url` (the embedded local PostgreSQL); `db ha …` is cli/db-ha.ts.
import { Command } from 'commander';
import { redactUrl, startLocalServer, stopLocalServer, resolveDatabaseUrl } from '../db/local-server';
import { registerHa } from './db-ha';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';

export function register(program: Command): void {
  program
    .command('migrate')
    .description('apply migrations/ to DATABASE_URL (or the embedded local PostgreSQL)')
    .option('--schema <name>', 'apply inside this schema (created if missing)')
    .action(async (o: { schema?: string }) => {
      const pool = createPool({ url: resolveDatabaseUrl(), max: 1 });
      try {
        const applied = await migrate(pool, { schema: o.schema });
        console.log(JSON.stringify({ applied }));
      } finally {
        await pool.end();
      }
    });

  const db = program
    .command('db')
    .description('the embedded local PostgreSQL server (used when DATABASE_URL is unset)');
  db.command('start')
    .description(
      'start the local server (idempotent) and print its URL with the password hidden (`db url` prints it whole)',
    )
    .option('--fast', 'fsync off: for tests only')
    .action((o: { fast?: boolean }) => console.log(redactUrl(startLocalServer({ fast: o.fast }).url)));
  db.command('stop')
    .description('stop the local server')
    .action(() => stopLocalServer());
  db.command('url')
    .description('print the database URL commands will use, password included (for DATABASE_URL=$(oncepay db url))')
    .action(() => console.log(resolveDatabaseUrl()));
  registerHa(db);
}
