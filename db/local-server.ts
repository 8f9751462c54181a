// A private PostgreSQL server for this checkout: the "embedded default" used when DATABASE_URL is unset.
// It is the real server from Debian's `postgresql` package (installed by scripts/setup.sh), in a data folder
// of its own, listening on loopback only. Nothing here is a fake of SQL.
// No connection gets in without the superuser's password (local-auth.ts): generated at initdb, kept in
// `<data>/oncepay.pgpass` (0600), returned inside the URL and never put on a command line or in a message.
// When we run as root, initdb and postgres run as the `postgres` user, which then owns the data folder (0700).
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as crypto from 'crypto';
import { DB_CODES, OncepayError, isOncepayError } from '../common/errors';
import { logger } from '../common/log';
import { projectRoot } from '../common/project-root';
import {
  generatePassword,
  hbaContent,
  parsePgpass,
  passwordlessHbaLines,
  PASSWORD_FILE,
  pgpassContent,
  redactUrl,
  scramVerifier,
  shellUrl,
  SUPERUSER,
} from './local-auth';

export interface LocalServerOptions {
  /** Data folder; defaults to `.oncepay/pg` under the project, or a /var/tmp folder if the postgres user cannot reach it. */
  dataDir?: string;
  port?: number;
  /** Trade durability for speed (tests only): fsync/synchronous_commit off. */
  fast?: boolean;
}

export interface LocalServer {
  /** postgres://postgres:<password>@127.0.0.1:<port>/postgres — a secret: print `redactUrl(url)` instead. */
  url: string;
  dataDir: string;
  port: number;
  /** The pgpass file holding the password (usable as PGPASSFILE for psql). */
  passwordFile: string;
}

export function pgBinDir(): string {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) {
    throw new OncepayError(
      DB_CODES.POSTGRES_MISSING,
      'PostgreSQL server binaries not found under /usr/lib/postgresql; run `make setup` (apt-get install postgresql)',
    );
  }
  const versions = fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0)
    throw new OncepayError(DB_CODES.POSTGRES_MISSING, 'no pg_ctl under /usr/lib/postgresql/*/bin');
  return path.join(base, versions[0], 'bin');
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * Run a postgres tool as the `postgres` system user when we are root (initdb and postgres refuse root).
 * Secrets go in through `input` (stdin) or files, never `args`: arguments are visible to every user in `ps`.
 */
export function runPg(
  tool: string,
  args: string[],
  opts: { allowFail?: boolean; input?: string } = {},
): { status: number; out: string } {
  const bin = path.join(pgBinDir(), tool);
  const cmd = isRoot ? 'runuser' : bin;
  const cmdArgs = isRoot ? ['-u', 'postgres', '--', bin, ...args] : args;
  const r = spawnSync(cmd, cmdArgs, { encoding: 'utf8', cwd: '/', input: opts.input });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.status !== 0 && !opts.allowFail) {
    throw new OncepayError(DB_CODES.POSTGRES_FAILED, `${tool} ${args.join(' ')} exited ${r.status}: ${out.trim()}`);
  }
  return { status: r.status ?? -1, out };
}

/** Give a file or folder we created to the postgres user when we are root, so it matches the data folder. */
function ownAsPostgres(p: string): void {
  if (isRoot) execFileSync('chown', ['postgres:postgres', p]);
}

function postgresCanWrite(dir: string): boolean {
  if (!isRoot) return true;
  const r = spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-w', dir], { cwd: '/' });
  return r.status === 0;
}

export function defaultDataDir(): string {
  const inProject = path.join(projectRoot(), '.oncepay', 'pg');
  fs.mkdirSync(inProject, { recursive: true });
  fs.chmodSync(inProject, 0o777);
  if (postgresCanWrite(inProject)) return path.join(inProject, 'data');
  // The checkout's parents are not traversable by the postgres user: keep the cluster outside, keyed by checkout.
  const key = crypto.createHash('sha256').update(projectRoot()).digest('hex').slice(0, 12);
  const outside = path.join('/var/tmp', `oncepay-pg-${key}`);
  fs.mkdirSync(outside, { recursive: true });
  fs.chmodSync(outside, 0o777);
  return path.join(outside, 'data');
}

export function defaultPort(): number {
  return Number(process.env.ONCEPAY_PG_PORT ?? 54329);
}

function urlFor(port: number, password: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

export function passwordFileOf(dataDir: string): string {
  return path.join(dataDir, PASSWORD_FILE);
}

export function isRunning(dataDir: string): boolean {
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) return false;
  return runPg('pg_ctl', ['status', '-D', dataDir], { allowFail: true }).status === 0;
}

/** Write a file into the data folder the way PostgreSQL's own files are: whole (rename), 0600, owned like the folder. */
function writePrivateFile(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  ownAsPostgres(tmp);
  fs.renameSync(tmp, file);
}

/** The password kept in the data folder, or null when there is none. Refuses a file others can read. */
function readPassword(dataDir: string): string | null {
  const file = passwordFileOf(dataDir);
  if (!fs.existsSync(file)) return null;
  if ((fs.statSync(file).mode & 0o077) !== 0) {
    throw new OncepayError(
      DB_CODES.PASSWORD_FILE_EXPOSED,
      `${file} can be read by other users (it must be mode 0600): run \`chmod 600 ${file}\`, and consider the password known (delete the data folder to get a new one)`,
    );
  }
  return parsePgpass(fs.readFileSync(file, 'utf8'));
}

/** A new cluster whose superuser has a generated password from the first moment (no window with `trust`). */
function initCluster(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true });
  ownAsPostgres(dataDir);
  fs.chmodSync(dataDir, 0o700);
  const password = generatePassword();
  // initdb reads the password from a file (never an argument) and wants the data folder empty: stage the file
  // beside it, in a 0700 folder only the postgres user (or we) can enter.
  const staging = fs.mkdtempSync(path.join(path.dirname(dataDir), '.initdb-'));
  try {
    ownAsPostgres(staging);
    const pwfile = path.join(staging, 'password');
    writePrivateFile(pwfile, `${password}\n`);
    runPg('initdb', [
      '-D',
      dataDir,
      '-U',
      SUPERUSER,
      '--auth=scram-sha-256',
      `--pwfile=${pwfile}`,
      '--encoding=UTF8',
      '--locale=C.UTF-8',
    ]);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  writePrivateFile(path.join(dataDir, 'pg_hba.conf'), hbaContent());
  writePrivateFile(passwordFileOf(dataDir), pgpassContent(password));
}

function startServer(dataDir: string, port: number, socketDir: string, fast: boolean | undefined): void {
  const settings = [`-p ${port}`, `-k ${socketDir}`, `-c listen_addresses=127.0.0.1`, '-c max_connections=200'];
  if (fast) settings.push('-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off');
  const logFile = path.join(path.dirname(dataDir), 'server.log');
  fs.writeFileSync(logFile, '', { flag: 'a' });
  fs.chmodSync(logFile, 0o666);
  const logStart = fs.statSync(logFile).size;
  try {
    runPg('pg_ctl', ['start', '-w', '-t', '60', '-D', dataDir, '-l', logFile, '-o', settings.join(' ')]);
  } catch (e) {
    // pg_ctl only says "could not start server": the reason is in what the server logged during this start.
    const said = fs.readFileSync(logFile, 'utf8').slice(logStart);
    if (/could not bind .*Address already in use/.test(said)) {
      throw new OncepayError(
        DB_CODES.PORT_IN_USE,
        `the embedded PostgreSQL could not listen on 127.0.0.1:${port}: the port is taken (another checkout's server — ` +
          `\`node bin/oncepay db stop\` there — or another PostgreSQL). Free it, or pick another port with ONCEPAY_PG_PORT.`,
        { port, dataDir, log: logFile },
      );
    }
    const reasons = said.split('\n').filter((l) => /\b(FATAL|PANIC|HINT|could not)\b/.test(l));
    if (!isOncepayError(e) || reasons.length === 0) throw e;
    throw new OncepayError(e.code, `${e.message}\n${reasons.join('\n')}`, { dataDir, log: logFile });
  }
}

/** Port and socket folder of the running server, from postmaster.pid (lines 4 and 5). */
function liveAddress(dataDir: string): { port: number; socketDir: string } {
  const lines = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
  return { port: Number(lines[3]), socketDir: lines[4] };
}

/** Does the running server let the superuser in over TCP without a password? (psql with no password source) */
function admitsWithoutPassword(port: number): boolean {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGPASSFILE: '/nonexistent/oncepay-no-password',
    PGCONNECT_TIMEOUT: '5',
  };
  delete env.PGPASSWORD;
  const bin = path.join(pgBinDir(), 'psql');
  const r = spawnSync(
    bin,
    ['-X', '-w', '-q', '-h', '127.0.0.1', '-p', String(port), '-U', SUPERUSER, '-d', 'postgres', '-c', 'SELECT 1'],
    { env, encoding: 'utf8', cwd: '/' },
  );
  return r.status === 0;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The password of an existing cluster. A data folder made before passwords (its pg_hba.conf lets connections in
 * with `trust`) is upgraded in place: the superuser gets a generated password (sent as a SCRAM verifier, so the
 * password itself never reaches the server), pg_hba.conf is replaced, the server reloads, and we check that a
 * passwordless connection is now refused. Leaves the server running.
 */
function secureCluster(dataDir: string, port: number, socketDir: string, fast: boolean | undefined): string {
  const hbaFile = path.join(dataDir, 'pg_hba.conf');
  const open = passwordlessHbaLines(fs.readFileSync(hbaFile, 'utf8'));
  const existing = readPassword(dataDir);
  if (open.length === 0) {
    if (existing !== null) return existing;
    throw new OncepayError(
      DB_CODES.PASSWORD_MISSING,
      `${dataDir} holds a PostgreSQL cluster that requires a password, but ${passwordFileOf(dataDir)} is missing or has no line for "${SUPERUSER}". ` +
        `Restore that file, or start afresh (its data is lost): \`node bin/oncepay db stop\` if it runs, then \`rm -rf ${dataDir}\`.`,
    );
  }
  const password = existing ?? generatePassword();
  // The file first: if we stop half-way, the next start finds the same password and finishes the job.
  if (existing === null) writePrivateFile(passwordFileOf(dataDir), pgpassContent(password));
  if (!isRunning(dataDir)) startServer(dataDir, port, socketDir, fast);
  const live = liveAddress(dataDir);
  runPg(
    'psql',
    [
      '-X',
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      live.socketDir,
      '-p',
      String(live.port),
      '-U',
      SUPERUSER,
      '-d',
      'postgres',
    ],
    {
      input: `ALTER ROLE ${SUPERUSER} PASSWORD '${scramVerifier(password)}';\n`,
    },
  );
  writePrivateFile(hbaFile, hbaContent());
  runPg('pg_ctl', ['reload', '-D', dataDir]);
  // The reload is a signal: wait until the postmaster has read the new file (bounded), then say so.
  for (let i = 0; admitsWithoutPassword(live.port); i++) {
    if (i >= 100)
      throw new OncepayError(
        DB_CODES.POSTGRES_FAILED,
        `${dataDir}: the server still admits connections without a password after reloading pg_hba.conf`,
      );
    sleepSync(100);
  }
  logger('db').warn(
    { dataDir, passwordFile: passwordFileOf(dataDir), replaced: open },
    'embedded PostgreSQL upgraded: it admitted connections without a password (trust); the superuser now has a generated password and pg_hba.conf requires it',
  );
  return password;
}

/** Start (or reuse) the local server. Idempotent. The URL carries the password: never print it (see redactUrl). */
export function startLocalServer(opts: LocalServerOptions = {}): LocalServer {
  const dataDir = opts.dataDir ?? defaultDataDir();
  const port = opts.port ?? defaultPort();
  const socketDir = path.join(path.dirname(dataDir), 'sock');
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) initCluster(dataDir);
  fs.mkdirSync(socketDir, { recursive: true });
  fs.chmodSync(socketDir, 0o777);
  const password = secureCluster(dataDir, port, socketDir, opts.fast);
  if (!isRunning(dataDir)) startServer(dataDir, port, socketDir, opts.fast);
  return { url: urlFor(port, password), dataDir, port, passwordFile: passwordFileOf(dataDir) };
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

export { redactUrl, shellUrl };
