// A private PostgreSQL server for this checkout: the "embedded default" used when DATABASE_URL is unset.
// It is the real server from Debian's `postgresql` package (installed by scripts/setup.sh), in a data folder
// of its own, listening on loopback only. Nothing here is a fake of SQL.
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as crypto from 'crypto';

export interface LocalServerOptions {
  /** Data folder; defaults to `.oncepay/pg` under the project, or a /var/tmp folder if the postgres user cannot reach it. */
  dataDir?: string;
  port?: number;
  /** Trade durability for speed (tests only): fsync/synchronous_commit off. */
  fast?: boolean;
}

export interface LocalServer {
  url: string;
  dataDir: string;
  port: number;
}

const PROJECT_ROOT = path.resolve(__dirname, '..', fs.existsSync(path.resolve(__dirname, '..', 'package.json')) ? '' : '..');

export function projectRoot(): string {
  return PROJECT_ROOT;
}

function pgBinDir(): string {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) {
    throw new Error('ONCEPAY__DB__POSTGRES_MISSING: PostgreSQL server binaries not found under /usr/lib/postgresql; run `make setup` (apt-get install postgresql)');
  }
  const versions = fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('ONCEPAY__DB__POSTGRES_MISSING: no pg_ctl under /usr/lib/postgresql/*/bin');
  return path.join(base, versions[0], 'bin');
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Run a postgres tool as the `postgres` system user when we are root (initdb and postgres refuse root). */
function runPg(tool: string, args: string[], opts: { allowFail?: boolean } = {}): { status: number; out: string } {
  const bin = path.join(pgBinDir(), tool);
  const cmd = isRoot ? 'runuser' : bin;
  const cmdArgs = isRoot ? ['-u', 'postgres', '--', bin, ...args] : args;
  const r = spawnSync(cmd, cmdArgs, { encoding: 'utf8', cwd: '/' });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.status !== 0 && !opts.allowFail) {
    throw new Error(`ONCEPAY__DB__POSTGRES_FAILED: ${tool} ${args.join(' ')} exited ${r.status}: ${out.trim()}`);
  }
  return { status: r.status ?? -1, out };
}

function postgresCanWrite(dir: string): boolean {
  if (!isRoot) return true;
  const r = spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-w', dir], { cwd: '/' });
  return r.status === 0;
}

export function defaultDataDir(): string {
  const inProject = path.join(PROJECT_ROOT, '.oncepay', 'pg');
  fs.mkdirSync(inProject, { recursive: true });
  fs.chmodSync(inProject, 0o777);
  if (postgresCanWrite(inProject)) return path.join(inProject, 'data');
  // The checkout's parents are not traversable by the postgres user: keep the cluster outside, keyed by checkout.
  const key = crypto.createHash('sha256').update(PROJECT_ROOT).digest('hex').slice(0, 12);
  const outside = path.join('/var/tmp', `oncepay-pg-${key}`);
  fs.mkdirSync(outside, { recursive: true });
  fs.chmodSync(outside, 0o777);
  return path.join(outside, 'data');
}

export function defaultPort(): number {
  return Number(process.env.ONCEPAY_PG_PORT ?? 54329);
}

function urlFor(port: number): string {
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

export function isRunning(dataDir: string): boolean {
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) return false;
  return runPg('pg_ctl', ['status', '-D', dataDir], { allowFail: true }).status === 0;
}

/** Start (or reuse) the local server. Idempotent. */
export function startLocalServer(opts: LocalServerOptions = {}): LocalServer {
  const dataDir = opts.dataDir ?? defaultDataDir();
  const port = opts.port ?? defaultPort();
  const socketDir = path.join(path.dirname(dataDir), 'sock');
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.mkdirSync(dataDir, { recursive: true });
    if (isRoot) execFileSync('chown', ['postgres:postgres', dataDir]);
    fs.chmodSync(dataDir, 0o700);
    runPg('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8']);
  }
  fs.mkdirSync(socketDir, { recursive: true });
  fs.chmodSync(socketDir, 0o777);
  if (!isRunning(dataDir)) {
    const settings = [`-p ${port}`, `-k ${socketDir}`, `-c listen_addresses=127.0.0.1`, '-c max_connections=200'];
    if (opts.fast) settings.push('-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off');
    const logFile = path.join(path.dirname(dataDir), 'server.log');
    fs.writeFileSync(logFile, '', { flag: 'a' });
    fs.chmodSync(logFile, 0o666);
    runPg('pg_ctl', ['start', '-w', '-t', '60', '-D', dataDir, '-l', logFile, '-o', settings.join(' ')]);
  }
  return { url: urlFor(port), dataDir, port };
}

export function stopLocalServer(opts: LocalServerOptions = {}): void {
  const dataDir = opts.dataDir ?? defaultDataDir();
  if (isRunning(dataDir)) runPg('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', dataDir]);
}

/** DATABASE_URL if set, otherwise the local server (started on demand). */
export function resolveDatabaseUrl(): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  return startLocalServer().url;
}
