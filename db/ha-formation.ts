// A pg_auto_failover formation on this machine: a monitor, a primary and a synchronous standby, each a real
// PostgreSQL from Debian's packages (`pg-auto-failover-cli`, `postgresql-15-auto-failover`; `ONCEPAY_HA=1 make
// setup` installs them) run by its own `pg_autoctl run` keeper, on loopback ports, in one folder. The failover
// itself is pg_auto_failover's (the monitor's state machine); this file only creates, starts, stops and asks it.
//
// Everything runs as the `postgres` OS user when we are root (PostgreSQL refuses root), with XDG_CONFIG_HOME,
// XDG_DATA_HOME and XDG_RUNTIME_DIR inside the folder, so pg_autoctl's configuration, state and pid files stay there
// and `stop` knows every process it must see gone. Authentication is `trust` on 127.0.0.1 for this local formation
// (no secret exists to leak); the README's production section says what a formation across machines uses.
import { execFile, execFileSync, spawn, spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { DB_CODES, OncepayError } from '../common/errors';
import { freePort } from '../common/free-port';
import { logger } from '../common/log';
import { projectRoot } from '../common/project-root';
import { sleep } from '../common/sleep';
import { formationUrl, HaSummary, parseHaState } from './ha-state';
import { pgBinDir } from './local-server';

const PG_AUTOCTL = '/usr/bin/pg_autoctl';
const FORMATION_FILE = 'formation.json';
/** The database the services use, and the user the formation trusts on loopback. */
export const HA_DBNAME = 'app';
export const HA_USER = 'postgres';
const NODES = 2;

export interface Formation {
  dir: string;
  monitorPort: number;
  nodePorts: number[];
  /** False from the first step of a creation until its last: a start finding it false stops what runs and recreates. */
  created: boolean;
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const log = logger('db-ha');

function failed(message: string): OncepayError {
  return new OncepayError(DB_CODES.HA_FAILED, message);
}

/** `.oncepay/ha` in the checkout, or a /var/tmp folder when the postgres user cannot reach the checkout. */
export function defaultFormationDir(): string {
  const inProject = path.join(projectRoot(), '.oncepay', 'ha');
  fs.mkdirSync(path.dirname(inProject), { recursive: true });
  if (!isRoot || spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-x', path.dirname(inProject)]).status === 0)
    return inProject;
  const key = crypto.createHash('sha256').update(projectRoot()).digest('hex').slice(0, 12);
  return path.join('/var/tmp', `oncepay-ha-${key}`);
}

function monitorData(f: Formation): string {
  return path.join(f.dir, 'monitor');
}
export function nodeData(f: Formation, i: number): string {
  return path.join(f.dir, `node${i + 1}`);
}
function allData(f: Formation): string[] {
  return [...f.nodePorts.map((_, i) => nodeData(f, i)), monitorData(f)];
}

/** The command line that runs pg_autoctl as the postgres user, with its files inside the formation's folder. */
function command(f: Formation, args: string[]): { cmd: string; args: string[] } {
  const env = [
    `PATH=${pgBinDir()}:/usr/bin:/bin`,
    `XDG_CONFIG_HOME=${path.join(f.dir, 'config')}`,
    `XDG_DATA_HOME=${path.join(f.dir, 'share')}`,
    `XDG_RUNTIME_DIR=${path.join(f.dir, 'run')}`,
    `HOME=${f.dir}`,
    'LANG=C.UTF-8',
  ];
  const inner = ['env', '-i', ...env, PG_AUTOCTL, ...args];
  return isRoot
    ? { cmd: 'runuser', args: ['-u', 'postgres', '--', ...inner] }
    : { cmd: inner[0], args: inner.slice(1) };
}

/** Runs one pg_autoctl command (asynchronously: a caller's event loop keeps serving meanwhile). */
function autoctl(f: Formation, args: string[], timeoutMs = 120_000): Promise<string> {
  const c = command(f, args);
  return new Promise((resolve, reject) => {
    execFile(c.cmd, c.args, { cwd: '/', timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(failed(`pg_autoctl ${args.join(' ')} failed: ${`${stderr}${stdout}`.trim().slice(-2000)}`));
      else resolve(stdout);
    });
  });
}

/** Starts the `pg_autoctl run` keeper of one data folder in the background, its output in `<folder>.log`. */
function startKeeper(f: Formation, pgdata: string): void {
  const c = command(f, ['run', '--pgdata', pgdata]);
  const out = fs.openSync(`${pgdata}.log`, 'a');
  const child = spawn(c.cmd, c.args, { cwd: '/', detached: true, stdio: ['ignore', out, out] });
  child.unref();
  fs.closeSync(out);
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid of the keeper of `pgdata` (pg_autoctl's pid file under XDG_RUNTIME_DIR, mirrored on the folder's path). */
function keeperPid(f: Formation, pgdata: string): number | undefined {
  return readPid(path.join(f.dir, 'run', 'pg_autoctl', pgdata.replace(/^\//, ''), 'pg_autoctl.pid'));
}

/** The pid of the postmaster of `pgdata` (first line of postmaster.pid). */
export function postmasterPid(pgdata: string): number | undefined {
  return readPid(path.join(pgdata, 'postmaster.pid'));
}

/** The process group of a detached keeper (its runuser, pg_autoctl and their children). */
function processGroup(pid: number): number | undefined {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces, so read after its closing parenthesis.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    return Number.isSafeInteger(pgrp) && pgrp > 1 ? pgrp : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The machine of node `i` lost, as far as this machine can play it: SIGKILL of its keeper's process group and of its
 * postmaster, so nothing restarts it and the monitor's health checks fail it over. For failover drills and tests;
 * `startFormation` brings the node back (it rejoins as a standby).
 */
export function crashNode(f: Formation, i: number): void {
  const pgdata = nodeData(f, i);
  const keeper = keeperPid(f, pgdata);
  const group = keeper === undefined ? undefined : processGroup(keeper);
  const postmaster = postmasterPid(pgdata);
  if (group !== undefined && group !== processGroup(process.pid)) process.kill(-group, 'SIGKILL');
  if (alive(keeper)) process.kill(keeper!, 'SIGKILL');
  if (alive(postmaster)) process.kill(postmaster!, 'SIGKILL');
}

function writeFormation(f: Formation): void {
  fs.writeFileSync(path.join(f.dir, FORMATION_FILE), `${JSON.stringify(f, null, 2)}\n`);
}

function readFormation(dir: string): Formation | undefined {
  const file = path.join(dir, FORMATION_FILE);
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Formation;
}

/** The formation in `dir`, or an error saying `oncepay db ha start` makes one. */
export function loadFormation(dir = defaultFormationDir()): Formation {
  const f = readFormation(dir);
  if (!f) throw failed(`no formation in ${dir}: run \`oncepay db ha start\``);
  return f;
}

/** What the monitor says now. */
export async function formationState(f: Formation): Promise<HaSummary> {
  return parseHaState(await autoctl(f, ['show', 'state', '--pgdata', monitorData(f), '--json'], 30_000));
}

/** The URL every service is given (all nodes, target_session_attrs=read-write). */
export async function formationUri(f: Formation): Promise<string> {
  const uri = await autoctlRetrying(f, ['show', 'uri', '--pgdata', monitorData(f), '--formation', 'default']);
  return formationUrl(uri, HA_USER);
}

/** Waits until one primary and a synchronous standby are settled; returns the state. */
export async function waitSettled(f: Formation, timeoutMs = 180_000): Promise<HaSummary> {
  const until = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const s = await formationState(f);
      if (s.settled) return s;
      last = s.nodes.map((n) => `${n.name}: ${n.reported} → ${n.assigned}`).join(', ');
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > until) throw failed(`the formation did not settle in ${timeoutMs} ms (${last})`);
    await sleep(500);
  }
}

function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  if (isRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
}

/** Progress of a start: `done` of `total` steps, the one just finished named. */
export type StepReport = (done: number, total: number, step: string) => void;
/** The steps of a first start (monitor, each node, settled); a restart of an existing formation has one. */
export const CREATE_STEPS = 2 + NODES;

async function create(dir: string, step: StepReport): Promise<Formation> {
  if (!fs.existsSync(PG_AUTOCTL))
    throw failed('pg_autoctl is not installed: run `ONCEPAY_HA=1 make setup` (Debian: pg-auto-failover-cli)');
  // A folder without a created formation is an interrupted creation (its processes stopped): start over.
  fs.rmSync(dir, { recursive: true, force: true });
  makePrivateDir(dir);
  makePrivateDir(path.join(dir, 'run')); // pg_autoctl keeps its pid files under XDG_RUNTIME_DIR only if it exists
  const f: Formation = { dir, monitorPort: await freePort(), nodePorts: [], created: false };
  for (let i = 0; i < NODES; i++) f.nodePorts.push(await freePort());
  // Written first, so that `stop` finds (and stops) what an interrupted creation started.
  writeFormation(f);
  const common = ['--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl'];
  log.info({ dir }, 'creating the monitor');
  await autoctl(f, ['create', 'monitor', '--pgdata', monitorData(f), '--pgport', String(f.monitorPort), ...common]);
  // Read before the keeper starts: `pg_autoctl run` rewrites the configuration file, and a read meanwhile fails.
  const monitorUri = (await autoctl(f, ['show', 'uri', '--pgdata', monitorData(f), '--formation', 'monitor'])).trim();
  startKeeper(f, monitorData(f));
  step(1, CREATE_STEPS, 'monitor created and started');
  for (let i = 0; i < NODES; i++) {
    log.info({ node: i + 1 }, 'creating a node');
    const args = ['create', 'postgres', '--pgdata', nodeData(f, i), '--pgport', String(f.nodePorts[i])];
    await autoctlRetrying(f, [...args, ...common, '--monitor', monitorUri, '--dbname', HA_DBNAME]);
    startKeeper(f, nodeData(f, i));
    step(2 + i, CREATE_STEPS, `node ${i + 1} created and started`);
  }
  f.created = true;
  writeFormation(f);
  return f;
}

/**
 * A pg_autoctl command retried while what it needs is not there yet: `create postgres` needs the monitor's keeper
 * to have started its postgres, and a keeper starting up rewrites its configuration file, which a `show` reading it
 * meanwhile finds incomplete.
 */
async function autoctlRetrying(f: Formation, args: string[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await autoctl(f, args);
    } catch (e) {
      if (attempt >= 20 || !/monitor|connect|configuration file/i.test((e as Error).message)) throw e;
      await sleep(1000);
    }
  }
}

/**
 * Starts the formation in `dir` (creates it the first time: ≈40 s here) and waits until a primary and a
 * synchronous standby are settled. Idempotent: keepers already running are left alone. Returns the URL.
 */
export async function startFormation(
  dir = defaultFormationDir(),
  step: StepReport = () => undefined,
): Promise<{ formation: Formation; url: string }> {
  let f = readFormation(dir);
  if (f && !f.created) await stopFormation(dir); // an interrupted creation: stop what it started, then start over
  if (!f || !f.created) f = await create(dir, step);
  else for (const pgdata of allData(f)) if (!alive(keeperPid(f, pgdata))) startKeeper(f, pgdata);
  await waitSettled(f);
  step(CREATE_STEPS, CREATE_STEPS, 'primary and synchronous standby settled');
  return { formation: f, url: await formationUri(f) };
}

/** A promoted standby and a demoted primary, by pg_auto_failover (`pg_autoctl perform failover`, which waits). */
export async function performFailover(f: Formation): Promise<HaSummary> {
  await autoctl(f, ['perform', 'failover', '--pgdata', monitorData(f)], 120_000);
  return waitSettled(f);
}

async function waitGone(pids: () => (number | undefined)[], timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (pids().some(alive)) {
    if (Date.now() > until) return false;
    await sleep(100);
  }
  return true;
}

/**
 * Stops every keeper and postgres of the formation (nodes first, the monitor last) and waits until none is left:
 * `pg_autoctl stop` (a fast shutdown), then --immediate, then SIGKILL of the pids in the formation's own pid files.
 */
export async function stopFormation(dir = defaultFormationDir()): Promise<void> {
  const f = readFormation(dir);
  if (!f) return;
  for (const pgdata of allData(f)) {
    if (!fs.existsSync(pgdata)) continue;
    const pids = () => [keeperPid(f, pgdata), postmasterPid(pgdata)];
    if (!pids().some(alive)) continue;
    await autoctl(f, ['stop', '--pgdata', pgdata], 30_000).catch(() => undefined);
    if (await waitGone(pids, 30_000)) continue;
    log.warn({ pgdata }, 'pg_autoctl stop did not end it in 30 s: stopping it immediately');
    await autoctl(f, ['stop', '--immediate', '--pgdata', pgdata], 30_000).catch(() => undefined);
    if (await waitGone(pids, 10_000)) continue;
    for (const pid of pids()) if (alive(pid)) process.kill(pid!, 'SIGKILL');
    if (!(await waitGone(pids, 10_000))) throw failed(`processes of ${pgdata} are still running after SIGKILL`);
  }
}
