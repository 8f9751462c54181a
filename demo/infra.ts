// The demo's infrastructure: PostgreSQL (DATABASE_URL if set, else an embedded server in a data folder of its
// own), a fresh schema, the localnet running the program binary ONCEPAY_PROGRAM selects (common/program-binary.ts:
// the Anchor program by default, `lite` for its lean twin), and a stack of things to stop on exit.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { Pool } from 'pg';
import { OncepayError } from '../common/errors';
import { freePort } from '../common/free-port';
import { programSoPath } from '../common/program-binary';
import { projectRoot } from '../common/project-root';
import { isRunning, startLocalServer, stopLocalServer } from '../db/local-server';
import { migrate, quoteIdent } from '../db/migrate';
import { createPool } from '../db/pool';
import { DEMO_CODES } from '../common/errors/codes';
import type { LocalnetHandle } from '../localnet';

export interface Teardown {
  push(what: string, fn: () => Promise<void> | void): void;
  /** Run every registered stop in reverse order; errors are collected, never thrown half-way. */
  run(): Promise<string[]>;
}

export function createTeardown(): Teardown {
  const stack: Array<{ what: string; fn: () => Promise<void> | void }> = [];
  return {
    push(what, fn) {
      stack.push({ what, fn });
    },
    async run() {
      const errors: string[] = [];
      while (stack.length > 0) {
        const { what, fn } = stack.pop()!;
        try {
          await fn();
        } catch (e) {
          errors.push(`${what}: ${(e as Error).message}`);
        }
      }
      return errors;
    },
  };
}

export interface DemoDb {
  url: string;
  schema: string;
  pool: Pool;
  /** True when the demo started the PostgreSQL server itself (it stops it on exit unless --keep). */
  ownServer: boolean;
  dataDir: string | null;
  env: Record<string, string>;
}

/** The port of a server running on `dataDir` (line 4 of postmaster.pid), or null. */
function runningPort(dataDir: string): number | null {
  if (!isRunning(dataDir)) return null;
  try {
    const port = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[3]);
    return Number.isInteger(port) && port > 0 ? port : null;
  } catch {
    return null;
  }
}

/** DATABASE_URL when set (the schema keeps the demo apart); else an embedded server under .oncepay/pg-demo. */
export async function startDemoDb(teardown: Teardown, opts: { keep: boolean }): Promise<DemoDb> {
  let url = process.env.DATABASE_URL;
  let ownServer = false;
  let dataDir: string | null = null;
  if (!url) {
    const dir = path.join(projectRoot(), '.oncepay', 'pg-demo');
    fs.mkdirSync(dir, { recursive: true });
    // initdb/postgres run as the postgres user when we are root: it must be able to write here.
    fs.chmodSync(dir, 0o777);
    dataDir = path.join(dir, 'data');
    // A server already running on this folder (another demo, or one left by --keep) is reused, on its own port.
    const running = runningPort(dataDir);
    const port = running ?? (Number(process.env.ONCEPAY_DEMO_PG_PORT ?? 0) || (await freePort()));
    const server = startLocalServer({ dataDir, port, fast: true });
    url = server.url;
    if (running === null) {
      ownServer = true;
      const stopDir = dataDir;
      // With --keep this runs only when the person stops the demo (Ctrl-C); the data folder stays either way.
      teardown.push('postgres', () => stopLocalServer({ dataDir: stopDir }));
    }
  }
  const schema = `demo_${crypto.randomBytes(4).toString('hex')}`;
  const admin = createPool({ url, max: 1 });
  try {
    await migrate(admin, { schema });
  } finally {
    await admin.end();
  }
  if (!opts.keep) {
    const u = url;
    teardown.push('demo schema', async () => {
      const a = createPool({ url: u, max: 1 });
      try {
        await a.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
      } finally {
        await a.end();
      }
    });
  }
  const pool = createPool({ url, schema, max: 16 });
  teardown.push('database pool', () => pool.end());
  return { url, schema, pool, ownServer, dataDir, env: { DATABASE_URL: url, ONCEPAY_DB_SCHEMA: schema } };
}

export const SO_PATH = () => programSoPath();

export async function startDemoLocalnet(teardown: Teardown, programId: string): Promise<LocalnetHandle> {
  const so = SO_PATH();
  if (!fs.existsSync(so)) throw new OncepayError(DEMO_CODES.PROGRAM_MISSING, `${so} is missing: run \`make program\``);
  // Loaded here so `oncepay --help` does not load the native SVM.
  const { startLocalnet } = await import('../localnet');
  // Fast slots and a short finality depth keep the story under a minute; the indexer still reads `finalized`
  // as the node reports it, never a slot count.
  const handle = await startLocalnet({
    slotMs: 40,
    finalityDepth: 8,
    wsOnNextPort: false,
    programs: [{ programId, path: so }],
  });
  teardown.push('localnet', () => handle.stop());
  return handle;
}
