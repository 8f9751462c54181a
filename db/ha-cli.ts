// `oncepay db ha start|stop|status|failover`: the local pg_auto_failover formation of db/ha-formation.ts.
import * as cliProgress from 'cli-progress';
import { Command } from 'commander';
import {
  defaultFormationDir,
  formationState,
  formationUri,
  loadFormation,
  performFailover,
  startFormation,
  StepReport,
  stopFormation,
} from './ha-formation';

/** A progress bar on a terminal, one JSON line per step otherwise (CI logs). */
function progress(): { step: StepReport; stop(): void } {
  if (process.stderr.isTTY !== true)
    return {
      step: (done, total, step) =>
        process.stderr.write(`${JSON.stringify({ level: 'info', msg: 'db ha start', done, total, step })}\n`),
      stop: () => undefined,
    };
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: 'db ha start [{bar}] {value}/{total} {step}' },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    step: (done, total, step) => {
      if (!started) bar.start(total, 0, { step: '' });
      started = true;
      bar.update(done, { step });
    },
    stop: () => bar.stop(),
  };
}

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
      const p = progress();
      try {
        const { url } = await startFormation(o.dir ?? defaultFormationDir(), p.step);
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
