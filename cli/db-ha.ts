// `oncepay db ha start|stop|status|failover`: the local pg_auto_failover formation of db/ha-formation.ts.
import { Command } from 'commander';
import {
  defaultFormationDir,
  formationState,
  formationUri,
  loadFormation,
  performFailover,
  startFormation,
  stopFormation,
} from '../db/ha-formation';
import { progress } from './progress';

export function registerHa(db: Command): void {
  const ha = db
    .command('ha')
    .description(
      'a local pg_auto_failover formation (monitor, primary, synchronous standby) on loopback, for failover tests ' +
        '(`ONCEPAY_HA=1 make setup` installs pg_auto_failover)',
    );
  const dirOption = ['--dir <path>', 'the formation folder (default .oncepay/ha)'] as const;
  ha.command('start')
    .description(
      'create (≈40 s the first time) or start the formation, wait for a primary and a synchronous standby, print DATABASE_URL',
    )
    .option(...dirOption)
    .action(async (o: { dir?: string }) => {
      const p = progress<{ done: number; total: number; step: string }>({
        msg: 'db ha start',
        format: 'db ha start [{bar}] {value}/{total} {step}',
      });
      try {
        const { url } = await startFormation(o.dir ?? defaultFormationDir(), (done, total, step) =>
          p.update({ done, total, step }),
        );
        p.stop();
        console.log(url);
      } catch (e) {
        p.stop();
        throw e;
      }
    });
  ha.command('stop')
    .description('stop every keeper and postgres of the formation (its data stays for the next start)')
    .option(...dirOption)
    .action(async (o: { dir?: string }) => stopFormation(o.dir ?? defaultFormationDir()));
  ha.command('status')
    .description("the monitor's view: each node's state, which one is primary, and the URL")
    .option(...dirOption)
    .action(async (o: { dir?: string }) => {
      const f = loadFormation(o.dir ?? defaultFormationDir());
      const state = await formationState(f);
      console.log(JSON.stringify({ url: await formationUri(f), ...state, primary: state.primary?.name }, null, 2));
    });
  ha.command('failover')
    .description('promote the standby and demote the primary (pg_autoctl perform failover), then print the new state')
    .option(...dirOption)
    .action(async (o: { dir?: string }) => {
      const state = await performFailover(loadFormation(o.dir ?? defaultFormationDir()));
      console.log(JSON.stringify({ primary: state.primary?.name, nodes: state.nodes }, null, 2));
    });
}
