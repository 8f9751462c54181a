// db/host-list.ts on two real PostgreSQL servers of this suite's own (A and B, one superuser password), each made
// read-only or writable with default_transaction_read_only (ALTER SYSTEM + reload), as a standby or a demoted
// primary looks to a client: a multi-host URL with target_session_attrs=read-write reaches the writable one, and
// follows when the roles swap under a running pool. tests/ha does the same on a real pg_auto_failover formation.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { Client, Pool } from 'pg';
import { DB_CODES, OncepayError } from '../../common/errors';
import { freePort } from '../../common/free-port';
import { scramVerifier } from '../../db/local-auth';
import { startLocalServer, stopLocalServer } from '../../db/local-server';
import { clientClassOf } from '../../db/host-list';
import { createPool } from '../../db/pool';
import { isDatabaseUnavailable } from '../../db/unavailable';

const ROOT = path.resolve(__dirname, '..', '..');

interface Server {
  port: number;
  dataDir: string;
  url: string;
}

async function setReadOnly(s: Server, on: boolean): Promise<void> {
  const c = new Client({ connectionString: s.url });
  await c.connect();
  try {
    await c.query(`ALTER SYSTEM SET default_transaction_read_only = ${on ? 'on' : 'off'}`);
    await c.query('SELECT pg_reload_conf()');
  } finally {
    await c.end();
  }
  // The reload is asynchronous: wait until a new session sees it.
  for (;;) {
    const d = new Client({ connectionString: s.url });
    await d.connect();
    const v = (await d.query(`SELECT current_setting('transaction_read_only') AS v`)).rows[0].v;
    await d.end();
    if (v === (on ? 'on' : 'off')) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The port of the server a session of `db` lands on (inet_server_port), by a statement that writes. */
async function writtenOn(db: Pool): Promise<number> {
  const r = await db.query(`INSERT INTO hl_probe VALUES (inet_server_port()) RETURNING port`);
  return r.rows[0].port;
}

describe('db/host-list: a multi-host URL follows the writable server', function () {
  this.timeout(120_000);
  let a: Server;
  let b: Server;
  let password: string;
  const pools: Pool[] = [];

  function urlOf(hosts: Server[], query: string): string {
    const list = hosts.map((s) => `127.0.0.1:${s.port}`).join(',');
    return `postgres://postgres:${encodeURIComponent(password)}@${list}/postgres?${query}`;
  }
  function pool(url: string, max = 2): Pool {
    const p = createPool({ url, max, applicationName: 'oncepay-host-list-test', connectTimeoutMs: 10_000 });
    pools.push(p);
    return p;
  }

  before(async () => {
    const start = async (label: string): Promise<Server> => {
      const dir = path.join(ROOT, '.oncepay', `pg-host-list-${label}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.chmodSync(dir, 0o777);
      const dataDir = path.join(dir, 'data');
      stopLocalServer({ dataDir });
      fs.rmSync(dataDir, { recursive: true, force: true }); // a fresh cluster: B's password is changed below
      const s = startLocalServer({ dataDir, port: await freePort(), fast: true });
      return { port: s.port, dataDir, url: s.url };
    };
    a = await start('a');
    b = await start('b');
    password = decodeURIComponent(new URL(a.url).password);
    // One password on both, as a formation's nodes share their users (sent as a SCRAM verifier).
    const c = new Client({ connectionString: b.url });
    await c.connect();
    await c.query(`ALTER ROLE postgres PASSWORD '${scramVerifier(password)}'`);
    await c.end();
    b.url = urlOf([b], '');
    for (const s of [a, b]) {
      const d = new Client({ connectionString: s.url });
      await d.connect();
      await d.query('CREATE TABLE IF NOT EXISTS hl_probe (port int)');
      await d.end();
    }
  });

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end()));
  });

  after(() => {
    for (const s of [a, b]) if (s) stopLocalServer({ dataDir: s.dataDir });
  });

  it('skips a host that refuses connections and one that is read-only; with any, the read-only one is taken', async () => {
    await setReadOnly(a, false);
    await setReadOnly(b, true);
    const closed = await freePort();
    const list = `127.0.0.1:${closed},127.0.0.1:${b.port},127.0.0.1:${a.port}`;
    const rw = pool(
      `postgres://postgres:${encodeURIComponent(password)}@${list}/postgres?target_session_attrs=read-write`,
    );
    expect(await writtenOn(rw)).to.equal(a.port);
    const any = pool(`postgres://postgres:${encodeURIComponent(password)}@${list}/postgres?target_session_attrs=any`);
    const r = await any.query('SELECT inet_server_port() AS port');
    expect(r.rows[0].port).to.equal(b.port);
  });

  it('primary (libpq: not in recovery) takes a server whose default is read-only but is no standby', async () => {
    await setReadOnly(a, true);
    await setReadOnly(b, true);
    const p = pool(urlOf([b, a], 'target_session_attrs=primary'));
    expect((await p.query('SELECT inet_server_port() AS port')).rows[0].port).to.equal(b.port);
  });

  it('when the roles swap under a running pool: the lent connection is refused with 25006 (an outage), the next goes to the new writable server', async () => {
    await setReadOnly(a, false);
    await setReadOnly(b, true);
    const p = pool(urlOf([a, b], 'target_session_attrs=read-write'), 1);
    expect(await writtenOn(p)).to.equal(a.port);
    const lent = await p.connect();
    await setReadOnly(a, true);
    await setReadOnly(b, false);
    const refused = await lent.query('INSERT INTO hl_probe VALUES (0)').then(
      () => null,
      (e: Error) => e,
    );
    expect((refused as { code?: string })?.code).to.equal('25006');
    expect(isDatabaseUnavailable(refused)).to.equal(true);
    lent.release();
    expect(await writtenOn(p)).to.equal(b.port);
    // A LISTEN connection made with the pool's Client class lands on the writable server as well.
    const listener = new (clientClassOf(p))(p.options);
    await listener.connect();
    expect((await listener.query('SELECT inet_server_port() AS port')).rows[0].port).to.equal(b.port);
    await listener.end();
  });

  it('no writable server at all: the acquire fails as an outage (503, backoff), and recovers when one is back', async () => {
    await setReadOnly(a, true);
    await setReadOnly(b, true);
    const p = pool(urlOf([a, b], 'target_session_attrs=read-write'));
    const e = await writtenOn(p).then(
      () => null,
      (x: Error) => x,
    );
    expect(e, 'no host is writable').to.be.instanceOf(Error);
    expect(isDatabaseUnavailable(e), String(e)).to.equal(true);
    await setReadOnly(b, false);
    expect(await writtenOn(p)).to.equal(b.port);
  });

  it('sslmode=prefer as libpq reads it: a server without SSL is reached in plain text (pg alone would refuse)', async () => {
    await setReadOnly(a, false);
    const ssl = (await new Client({ connectionString: a.url }).connect().then(async (c) => {
      const v = (await c.query(`SELECT current_setting('ssl') AS v`)).rows[0].v;
      await c.end();
      return v;
    })) as string;
    expect(ssl, 'the embedded server runs without SSL').to.equal('off');
    const p = pool(urlOf([a], 'sslmode=prefer'));
    expect(await writtenOn(p)).to.equal(a.port);
  });

  it('a URL asking for what the pool cannot honour is refused when the pool is made, with the value named', () => {
    try {
      createPool({ url: urlOf([a, b], 'target_session_attrs=standby') });
      expect.fail('created');
    } catch (e) {
      expect(e).to.be.instanceOf(OncepayError);
      expect((e as OncepayError).code).to.equal(DB_CODES.CONNINFO_UNSUPPORTED);
      expect((e as Error).message).to.include('target_session_attrs=standby');
      expect((e as Error).message).not.to.include(password);
    }
  });
});
