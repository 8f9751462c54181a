// The fault tests' own PostgreSQL server (its own data folder and port, so stopping it disturbs no other suite),
// the real `oncepay` processes spawned against it, and the two faults: a server restart and
// pg_terminate_backend of one command's sessions (found by application_name, set per command by db/pool.ts).
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Pool } from 'pg';
import { freePort } from '../../common/free-port';
import { startLocalServer, stopLocalServer } from '../../db/local-server';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { currentSuite, recordProcess } from './secrets';

export { freePort };

export const ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'oncepay');

export interface FaultDb {
  url: string;
  schema: string;
  /** The test's own pool (it survives the faults too: made by createPool). */
  pool: Pool;
  env: Record<string, string>;
  /** Stop the server (fast shutdown: every session gets 57P01), run `whileDown`, start it again. */
  restart(whileDown?: () => Promise<void>): Promise<void>;
  /** pg_terminate_backend of every session named `applicationName`; returns how many. */
  terminate(applicationName: string): Promise<number>;
  /** Sessions of `applicationName` waiting on a lock (a request or batch held in flight by the test). */
  waiting(applicationName: string): Promise<number>;
  close(): Promise<void>;
}

/** A PostgreSQL server of the suite's own, migrated into `schema`. */
export async function startFaultDb(label: string): Promise<FaultDb> {
  const dir = path.join(ROOT, '.oncepay', `pg-faults-${label}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o777);
  const dataDir = path.join(dir, 'data');
  const port = await freePort();
  stopLocalServer({ dataDir }); // a leftover of an interrupted run
  const server = startLocalServer({ dataDir, port, fast: true });
  const schema = `f_${label}`;
  const admin = createPool({ url: server.url, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await migrate(admin, { schema });
  await admin.end();
  const pool = createPool({
    url: server.url,
    schema,
    max: 4,
    applicationName: 'oncepay-fault-test',
    // The test's own instrument (terminate, waiting, the final counts): patient, so a slow connect on a loaded
    // machine right after a restart is not mistaken for the service's failure (the services keep 2 s, below).
    connectTimeoutMs: 30_000,
  });
  return {
    url: server.url,
    schema,
    pool,
    env: { DATABASE_URL: server.url, ONCEPAY_DB_SCHEMA: schema, ONCEPAY_DB_CONNECT_TIMEOUT_MS: '2000' },
    async restart(whileDown) {
      stopLocalServer({ dataDir });
      try {
        await whileDown?.();
      } finally {
        startLocalServer({ dataDir, port, fast: true });
      }
    },
    async terminate(applicationName) {
      const { rows } = await pool.query(
        'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
        [applicationName],
      );
      return rows[0].n;
    },
    async waiting(applicationName) {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [applicationName],
      );
      return rows[0].n;
    },
    async close() {
      await pool.end();
      stopLocalServer({ dataDir });
    },
  };
}

export interface Proc {
  child: ChildProcess;
  /** The first stdout line, parsed (servers print their address there). */
  firstLine: Promise<Record<string, unknown>>;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  alive(): boolean;
  stderr(): string;
}

/**
 * `oncepay <args>` as a child process, its output captured. From the TypeScript source (ts-node: seconds of CPU per
 * start), unless `fromSource` is false: then the compiled CLI in dist/ (a chaos run restarts processes many times; it
 * checks that dist/ is not older than the source first, testkit's distIsCurrent). `suite`: the suite it is recorded
 * under for its secrets check (secrets.ts); the default is the current spec file.
 */
export function startOncepay(
  args: string[],
  env: Record<string, string>,
  opts: { fromSource?: boolean; suite?: string } = {},
): Proc {
  const { ONCEPAY_FROM_SOURCE: _inherited, ...inherited } = process.env;
  const suite = opts.suite ?? currentSuite();
  const argv = [process.execPath, BIN, ...args];
  const child = spawn(argv[0], argv.slice(1), {
    cwd: ROOT,
    env: {
      ...inherited,
      NODE_ENV: 'test',
      ONCEPAY_LOG_LEVEL: 'warn',
      ...env,
      ...(opts.fromSource === false ? {} : { ONCEPAY_FROM_SOURCE: '1' }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let resolveLine!: (x: Record<string, unknown>) => void;
  const firstLine = new Promise<Record<string, unknown>>((r) => (resolveLine = r));
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    const nl = stdout.indexOf('\n');
    if (nl >= 0) resolveLine(JSON.parse(stdout.slice(0, nl)));
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  recordProcess(suite, argv, () => stdout + stderr);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  void done.then((r) => resolveLine({ exited: r.code, stderr: r.stderr }));
  return {
    child,
    firstLine,
    done,
    alive: () => child.exitCode === null && child.signalCode === null,
    stderr: () => stderr,
  };
}

export async function waitFor(pred: () => Promise<boolean> | boolean, what: string, limitMs = 240_000): Promise<void> {
  const until = Date.now() + limitMs;
  for (;;) {
    try {
      if (await pred()) return;
    } catch {
      // the database may be coming back
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** GET a JSON endpoint: status, body and headers (no throw on non-2xx). */
export async function getJson(
  url: string,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const r = await fetch(url);
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : {}, headers: r.headers };
}
