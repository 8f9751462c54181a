// The embedded PostgreSQL server (db/local-server.ts) lets no one in without its generated password: real
// servers in data folders of their own, on free ports, started and stopped here.
import { expect } from 'chai';
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { Client, ClientConfig } from 'pg';
import { DB_CODES, isOncepayError } from '../../common/errors';
import { freePort } from '../../common/free-port';
import { parsePgpass } from '../../db/local-auth';
import {
  LocalServer,
  isRunning,
  passwordFileOf,
  pgBinDir,
  runPg,
  startLocalServer,
  stopLocalServer,
} from '../../db/local-server';

const ROOT = path.resolve(__dirname, '..', '..');

/** A folder the postgres user can enter (initdb runs as postgres when we are root). */
function scratch(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `oncepay-ops-${label}-`));
  fs.chmodSync(dir, 0o777);
  return dir;
}

async function query(config: ClientConfig | string, sql = 'SELECT current_user AS who'): Promise<string> {
  const c = new Client(typeof config === 'string' ? { connectionString: config } : config);
  await c.connect();
  try {
    return String((await c.query(sql)).rows[0].who);
  } finally {
    await c.end();
  }
}

async function refusal(config: ClientConfig): Promise<Error & { code?: string }> {
  try {
    await query(config);
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error(
    `connection ${JSON.stringify({ ...config, password: config.password ? '(set)' : undefined })} was let in`,
  );
}

function passwordOf(url: string): string {
  const p = decodeURIComponent(new URL(url).password);
  expect(p.length, 'the URL carries a password').to.be.greaterThan(20);
  return p;
}

/** Every process's command line on the machine. */
function allCommandLines(): string {
  return execFileSync('ps', ['-eo', 'pid,args', '--no-headers'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function serverPid(dataDir: string): number {
  return Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** Each way in without the password, each refused; with trust (before this change) every one of them got in. */
async function expectPasswordRequired(server: LocalServer): Promise<void> {
  const socketDir = path.join(path.dirname(server.dataDir), 'sock');
  const base = { host: '127.0.0.1', port: server.port, user: 'postgres', database: 'postgres' };
  // No password at all, over TCP and over the (world-writable) unix socket: the server demands one.
  const noPassword = await refusal(base);
  expect(noPassword.message).to.match(/password/i);
  expect((await refusal({ ...base, host: socketDir })).message).to.match(/password/i);
  // A wrong one: the server itself answers invalid_password.
  expect((await refusal({ ...base, password: 'not-the-password' })).code).to.equal('28P01');
  // libpq as an operator would run it, with no password source at all.
  const psql = path.join(pgBinDir(), 'psql');
  let out = '';
  try {
    execFileSync(psql, ['-X', '-w', '-h', '127.0.0.1', '-p', String(server.port), '-U', 'postgres', '-c', 'SELECT 1'], {
      env: { ...process.env, PGPASSWORD: '', PGPASSFILE: '/nonexistent' },
      stdio: 'pipe',
    });
    expect.fail('psql without a password got in');
  } catch (e) {
    out = String((e as { stderr?: Buffer }).stderr ?? '');
  }
  expect(out).to.match(/no password supplied|password authentication failed/);
}

function expectPrivatePasswordFile(server: LocalServer): void {
  const file = passwordFileOf(server.dataDir);
  expect(server.passwordFile).to.equal(file);
  const st = fs.statSync(file);
  expect((st.mode & 0o777).toString(8)).to.equal('600');
  const folder = fs.statSync(server.dataDir);
  expect((folder.mode & 0o777).toString(8)).to.equal('700');
  expect(st.uid, 'owned like the data folder').to.equal(folder.uid);
  expect(parsePgpass(fs.readFileSync(file, 'utf8'))).to.equal(passwordOf(server.url));
}

function expectNoTrust(dataDir: string): void {
  const hba = fs.readFileSync(path.join(dataDir, 'pg_hba.conf'), 'utf8').replace(/#.*/g, '');
  expect(hba).to.not.match(/\btrust\b/);
  expect(hba).to.match(/scram-sha-256/);
}

describe('embedded PostgreSQL: a new data folder', function () {
  let base: string;
  let dataDir: string;
  let server: LocalServer;

  before(async function () {
    base = scratch('new');
    dataDir = path.join(base, 'data');
    server = startLocalServer({ dataDir, port: await freePort(), fast: true });
  });
  after(function () {
    stopLocalServer({ dataDir });
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('returns a URL with the generated password, and it works', async function () {
    expect(new URL(server.url).username).to.equal('postgres');
    passwordOf(server.url);
    expect(await query(server.url)).to.equal('postgres');
  });

  it('refuses connections without the password (TCP, unix socket, psql) and with a wrong one', async function () {
    await expectPasswordRequired(server);
    expectNoTrust(dataDir);
  });

  it('keeps the password in the data folder, mode 0600, owned like the folder (0700)', function () {
    expectPrivatePasswordFile(server);
  });

  it("puts the password in no command line (ps of every process, the server's included) and not in the server log", async function () {
    const password = passwordOf(server.url);
    await query(server.url);
    await refusal({ host: '127.0.0.1', port: server.port, user: 'postgres', password: 'wrong' });
    const lines = allCommandLines();
    expect(lines, 'the server process is listed').to.include(`${serverPid(dataDir)} `);
    expect(lines.includes(password)).to.equal(false);
    expect(fs.readFileSync(path.join(base, 'server.log'), 'utf8').includes(password)).to.equal(false);
  });

  it('keeps the same password across a restart', async function () {
    stopLocalServer({ dataDir });
    expect(isRunning(dataDir)).to.equal(false);
    const again = startLocalServer({ dataDir, port: server.port, fast: true });
    expect(again.url).to.equal(server.url);
    expect(await query(again.url)).to.equal('postgres');
  });

  it('refuses to start on a port another process holds, naming the port and ONCEPAY_PG_PORT (not just "could not start")', async function () {
    stopLocalServer({ dataDir });
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(server.port, '127.0.0.1', resolve));
    try {
      expect(() => startLocalServer({ dataDir, port: server.port, fast: true }))
        .to.throw(new RegExp(`127\\.0\\.0\\.1:${server.port}: the port is taken`))
        .that.satisfies(
          (e: unknown) => isOncepayError(e, DB_CODES.PORT_IN_USE) && e.message.includes('ONCEPAY_PG_PORT'),
        );
      expect(isRunning(dataDir)).to.equal(false);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    // Once the port is free the same data folder starts as before.
    expect(await query(startLocalServer({ dataDir, port: server.port, fast: true }).url)).to.equal('postgres');
  });

  it('refuses to start, saying how to fix it, when the password file is missing', function () {
    stopLocalServer({ dataDir });
    const file = passwordFileOf(dataDir);
    fs.renameSync(file, `${file}.away`);
    try {
      expect(() => startLocalServer({ dataDir, port: server.port, fast: true }))
        .to.throw(/ONCEPAY__DB__PASSWORD_MISSING/)
        .that.satisfies(
          (e: unknown) => isOncepayError(e, DB_CODES.PASSWORD_MISSING) && e.message.includes(`rm -rf ${dataDir}`),
        );
      expect(isRunning(dataDir)).to.equal(false);
    } finally {
      fs.renameSync(`${file}.away`, file);
    }
  });

  it('refuses a password file other users can read', function () {
    const file = passwordFileOf(dataDir);
    fs.chmodSync(file, 0o644);
    try {
      expect(() => startLocalServer({ dataDir, port: server.port, fast: true })).to.throw(
        /ONCEPAY__DB__PASSWORD_FILE_EXPOSED.*chmod 600/,
      );
    } finally {
      fs.chmodSync(file, 0o600);
    }
    expect(startLocalServer({ dataDir, port: server.port, fast: true }).url).to.equal(server.url);
  });
});

describe('embedded PostgreSQL: a data folder from before passwords (trust) is upgraded', function () {
  let base: string;

  /** A cluster exactly as the embedded server made them before: initdb --auth=trust. */
  function trustCluster(dataDir: string): void {
    fs.mkdirSync(dataDir);
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dataDir]);
    fs.chmodSync(dataDir, 0o700);
    runPg('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8']);
  }

  before(function () {
    base = scratch('trust');
  });
  after(function () {
    for (const d of ['stopped', 'running']) stopLocalServer({ dataDir: path.join(base, d, 'data') });
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('when stopped: the next start sets a password and requires it', async function () {
    fs.mkdirSync(path.join(base, 'stopped'), { mode: 0o777 });
    fs.chmodSync(path.join(base, 'stopped'), 0o777);
    const dataDir = path.join(base, 'stopped', 'data');
    trustCluster(dataDir);
    const server = startLocalServer({ dataDir, port: await freePort(), fast: true });
    expect(await query(server.url)).to.equal('postgres');
    await expectPasswordRequired(server);
    expectNoTrust(dataDir);
    expectPrivatePasswordFile(server);
  });

  it('when running: upgraded in place (open sessions keep going), then passwordless connections are refused', async function () {
    const dir = path.join(base, 'running');
    fs.mkdirSync(dir);
    fs.chmodSync(dir, 0o777);
    const dataDir = path.join(dir, 'data');
    trustCluster(dataDir);
    const port = await freePort();
    const sock = path.join(dir, 'sock');
    fs.mkdirSync(sock);
    fs.chmodSync(sock, 0o777);
    const log = path.join(dir, 'server.log');
    fs.writeFileSync(log, '');
    fs.chmodSync(log, 0o666);
    runPg('pg_ctl', [
      'start',
      '-w',
      '-D',
      dataDir,
      '-l',
      log,
      '-o',
      `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1`,
    ]);
    // Before: trust lets anyone in.
    const open = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    await open.connect();
    try {
      const pid = serverPid(dataDir);
      const server = startLocalServer({ dataDir, port, fast: true });
      expect(serverPid(dataDir), 'the same server, not a restart').to.equal(pid);
      expect((await open.query('SELECT 1 AS one')).rows[0].one).to.equal(1);
      expect(await query(server.url)).to.equal('postgres');
      await expectPasswordRequired(server);
      expectNoTrust(dataDir);
      expectPrivatePasswordFile(server);
    } finally {
      await open.end();
    }
  });
});

describe("make test's start-up (scripts/test.sh)", function () {
  it('prints the PostgreSQL URL without its password, and the password is in no output nor command line', async function () {
    const base = scratch('test-sh');
    const pgDir = path.join(base, 'pg-test');
    const port = await freePort();
    // ONCEPAY_TEST_CARGO=0: the start-up is under test, not the programs' cargo tests, which the programs group
    // runs beside this one; here they would wait on its cargo lock (59 s on a quiet machine, past the 120 s timeout
    // under load).
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ONCEPAY_TEST_PG_DIR: pgDir,
      ONCEPAY_PG_PORT: String(port),
      ONCEPAY_TEST_CARGO: '0',
    };
    delete env.DATABASE_URL;
    try {
      // The probe runs inside (with the URL in its environment) and checks `ps` while the server is up.
      const r = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
        const child = spawn('scripts/test.sh', ['tests/db/fixtures/startup-probe.ts'], {
          cwd: ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, out }));
      });
      expect(r.code, r.out).to.equal(0);
      expect(r.out).to.include(`test: PostgreSQL at postgres://postgres:***@127.0.0.1:${port}/postgres\n`);
      expect(r.out, 'the probe ran').to.match(/1 passing/);
      const password = parsePgpass(fs.readFileSync(passwordFileOf(path.join(pgDir, 'data')), 'utf8'));
      expect(password).to.be.a('string').with.length.greaterThan(20);
      expect(r.out.includes(password!), 'password printed').to.equal(false);
      expect(isRunning(path.join(pgDir, 'data')), 'stopped on exit').to.equal(false);
    } finally {
      stopLocalServer({ dataDir: path.join(pgDir, 'data') });
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
