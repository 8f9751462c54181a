// The real `oncepay` processes of a chaos run (tests/faults' startOncepay spawns each one): the merchant API, two
// payout workers, the scanner, the webhook receiver and the outbox worker, each on a port of its own kept across
// restarts. A process that dies is started again after a moment (as a service manager would); a kill planned at a
// failpoint SIGKILLs the process now and starts it again armed with ONCEPAY_FAILPOINT=<point>@<n>, so it dies there
// (or runs on, if it never gets there). What fired is read from each dead process's last words.
import { freePort, type Proc, startOncepay } from '../../tests/faults/support';
import { distIsCurrent } from '../../testkit/dist';
import { getJson } from '../../tests/faults/support';
import type { FailpointName } from '../../common/fault-space';
import { CHAOS_CLUSTER, type Stage, WEBHOOK_SECRET } from './stage';
import { CHAOS_PROCESSES, type ChaosProcess } from './plan';

/** Between a process's death and its next start. */
const RESTART_MS = 300;

/** PostgreSQL's application_name of each process's sessions (db/pool.ts). */
export const APPLICATION_NAME: Record<ChaosProcess, string> = {
  api: 'oncepay-payout-serve',
  'worker-0': 'oncepay-payout-worker',
  'worker-1': 'oncepay-payout-worker',
  scanner: 'oncepay-indexer-run',
  webhook: 'oncepay-indexer-webhook',
  outbox: 'oncepay-outbox-run',
};

export interface Supervisor {
  /** The process's own port (API, webhook receiver) or its metrics port. */
  port(p: ChaosProcess): number;
  /** SIGKILL now; start again armed with `failpoint` (or plain after `downMs`, default RESTART_MS, when null). */
  kill(p: ChaosProcess, failpoint: FailpointName | null, nth: number, downMs?: number): void;
  /** Every process up and answering /readyz. */
  ready(): Promise<void>;
  /** Failpoints that killed a process, in order. */
  fired: FailpointName[];
  /** Stop everything for good (SIGKILL; nothing is restarted after). */
  stopAll(): Promise<void>;
  /** One line per start and death, for the run's log. */
  events: string[];
}

export async function superviseProcesses(s: Stage): Promise<Supervisor> {
  const fromSource = !distIsCurrent();
  const ports = Object.fromEntries(
    await Promise.all(CHAOS_PROCESSES.map(async (p) => [p, await freePort()])),
  ) as Record<ChaosProcess, number>;
  const current = new Map<ChaosProcess, Proc>();
  const fired: FailpointName[] = [];
  const events: string[] = [];
  let stopping = false;
  const t0 = performance.now();
  const log = (line: string) => events.push(`${String(Math.round(performance.now() - t0)).padStart(6)} ms ${line}`);

  const rpc = s.net.url;
  const metrics = (p: ChaosProcess) => ['--metrics-port', String(ports[p])];
  function argsOf(p: ChaosProcess): string[] {
    switch (p) {
      case 'api':
        return ['payout', 'serve', '--port', String(ports.api)];
      case 'worker-0':
      case 'worker-1':
        return [
          ...['payout', 'worker', '--rpc', rpc, '--authority', s.authorityFile, '--concurrency', '2'],
          ...['--poll-ms', '100', '--idle-ms', '100', '--max-chain-failures', '5', '--drain-ms', '2000'],
          ...metrics(p),
        ];
      case 'scanner':
        return [
          ...['indexer', 'run', '--rpc', rpc, '--cluster', CHAOS_CLUSTER, '--from-slot', String(s.firstSlot)],
          ...['--poll-ms', '200', '--rescan-window', '16', '--chunk-size', '8', '--rpc-attempts', '3'],
          ...['--rpc-timeout-ms', '3000', ...metrics(p)],
        ];
      case 'webhook':
        return [
          ...['indexer', 'webhook', '--rpc', rpc, '--cluster', CHAOS_CLUSTER, '--port', String(ports.webhook)],
          ...['--recheck-ms', '200', '--inline-check-ms', '500', '--rpc-attempts', '3', '--rpc-timeout-ms', '3000'],
        ];
      case 'outbox':
        return [
          ...['outbox', 'run', '--url', s.endpoint.url, '--poll-ms', '100', '--lease-seconds', '3'],
          ...['--backoff-base-ms', '100', '--backoff-cap-ms', '1000', '--max-attempts', '1000', '--timeout-ms', '2000'],
          ...metrics(p),
        ];
    }
  }

  function start(p: ChaosProcess, failpoint: FailpointName | null, nth: number): void {
    if (stopping) return;
    const env = {
      ...s.db.env,
      ONCEPAY_WEBHOOK_SECRET: WEBHOOK_SECRET,
      ...(failpoint ? { ONCEPAY_FAILPOINT: `${failpoint}@${nth}` } : {}),
    };
    const proc = startOncepay(argsOf(p), env, { fromSource });
    current.set(p, proc);
    log(`${p} started (pid ${proc.child.pid})${failpoint ? ` armed at ${failpoint}@${nth}` : ''}`);
    void proc.done.then((r) => {
      const hit = /"failpoint":"([a-z_.]+)"/.exec(r.stderr)?.[1] as FailpointName | undefined;
      if (hit) fired.push(hit);
      log(`${p} (pid ${proc.child.pid}) ended: ${r.signal ?? `exit ${r.code}`}${hit ? ` at failpoint ${hit}` : ''}`);
      if (current.get(p) === proc && !stopping)
        setTimeout(() => current.get(p) === proc && start(p, null, 1), RESTART_MS);
    });
  }

  // Should this process die without stopping them (an uncaught error, a SIGTERM), its children go with it.
  const orphanGuard = () => {
    for (const proc of current.values()) if (proc.alive()) proc.child.kill('SIGKILL');
  };
  process.once('exit', orphanGuard);

  for (const p of CHAOS_PROCESSES) start(p, null, 1);

  /** The URL that answers 200 once the process is up and its database reachable. */
  const readyUrl = (p: ChaosProcess) => `http://127.0.0.1:${ports[p]}/readyz`;

  return {
    port: (p) => ports[p],
    kill(p, failpoint, nth, downMs = RESTART_MS) {
      const proc = current.get(p);
      current.delete(p);
      if (proc?.alive()) proc.child.kill('SIGKILL');
      log(`${p} killed (SIGKILL)${downMs > RESTART_MS ? `, down for ${downMs} ms` : ''}`);
      if (failpoint) start(p, failpoint, nth);
      else setTimeout(() => !current.has(p) && start(p, null, 1), downMs);
    },
    async ready() {
      for (const p of CHAOS_PROCESSES) {
        for (;;) {
          if (stopping) return;
          const up = await getJson(readyUrl(p)).then(
            (r) => r.status === 200,
            () => false,
          );
          if (up) break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    fired,
    events,
    async stopAll() {
      stopping = true;
      process.removeListener('exit', orphanGuard);
      const all = [...current.values()];
      current.clear();
      for (const proc of all) if (proc.alive()) proc.child.kill('SIGKILL');
      await Promise.all(all.map((proc) => proc.done));
    },
  };
}
