// db/listen: one LISTEN connection that hears only its schema's notifications and comes back by itself after a
// terminated backend and a server restart, until it is stopped or its signal aborts. A PostgreSQL server of the
// suite's own (tests/faults/support), so restarting it disturbs no other suite.
import { expect } from 'chai';
import pino from 'pino';
import { Pool } from 'pg';
import { listen, Listener, schemaNotification } from '../../db/listen';
import { createPool } from '../../db/pool';
import { until } from '../../testkit/until';
import { FaultDb, startFaultDb } from '../faults/support';

const CHANNEL = 'oncepay_listen_test';
const APP = 'oncepay-listen-test';
const WAIT = { timeoutMs: 60_000, intervalMs: 20 };

describe('db/listen schemaNotification (pure)', () => {
  it("reads a payload of this schema's: the schema alone, or the schema, a space and the detail", () => {
    expect(schemaNotification('s1', 's1')).to.equal('');
    expect(schemaNotification('s1 inv-7', 's1')).to.equal('inv-7');
    expect(schemaNotification('s1 a b', 's1')).to.equal('a b');
  });

  it("ignores another schema's payload, one that only starts like this schema's, and none", () => {
    expect(schemaNotification('s2 inv-7', 's1')).to.equal(null);
    expect(schemaNotification('s10 inv-7', 's1')).to.equal(null);
    expect(schemaNotification('s10', 's1')).to.equal(null);
    expect(schemaNotification(undefined, 's1')).to.equal(null);
  });
});

describe('db/listen: a LISTEN connection through faults (own PostgreSQL server)', function () {
  this.timeout(300_000);
  let fdb: FaultDb;
  let pool: Pool;
  let listener: Listener | undefined;
  const heard: string[] = [];
  let listening = 0;

  before(async () => {
    fdb = await startFaultDb('db_listen');
    // The listener's own application name, so the test can find (and terminate) its session.
    pool = createPool({ url: fdb.url, schema: fdb.schema, max: 1, applicationName: APP });
  });
  afterEach(async () => {
    await listener?.stop();
    listener = undefined;
  });
  after(async () => {
    await pool?.end();
    await fdb?.close();
  });

  function start(signal?: AbortSignal): Listener {
    heard.length = 0;
    listening = 0;
    return listen(pool, {
      channel: CHANNEL,
      onNotify: (detail) => heard.push(detail),
      onListening: () => (listening += 1),
      log: pino({ level: 'silent' }),
      reconnect: { baseMs: 20, capMs: 200 },
      lostMessage: 'test listener lost',
      signal,
    });
  }
  const notify = (payload: string) => fdb.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
  const sessions = async () =>
    (
      await fdb.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
        [APP],
      )
    ).rows[0].n;
  /** Notifications from one session arrive in order: once `mark` is heard, every earlier one has been too. */
  async function heardUpTo(mark: string): Promise<string[]> {
    await notify(`${fdb.schema} ${mark}`);
    await until(`notification ${mark}`, async () => heard.includes(mark), WAIT);
    return heard.slice(0, heard.indexOf(mark));
  }

  it("hears its schema's notifications (with and without detail), not another schema's or channel's", async () => {
    listener = start();
    await until('listening', async () => listening === 1, WAIT);
    await notify(fdb.schema);
    await notify(`${fdb.schema} inv-1`);
    await notify(`other_schema inv-2`);
    await notify(`${fdb.schema}x inv-3`);
    await fdb.pool.query('SELECT pg_notify($1, $2)', ['oncepay_other_channel', `${fdb.schema} inv-4`]);
    expect(await heardUpTo('mark')).to.deep.equal(['', 'inv-1']);
  });

  it('comes back after its backend is terminated: listening again (so the caller looks once), and hears', async () => {
    listener = start();
    await until('listening', async () => listening === 1, WAIT);
    expect(await fdb.terminate(APP)).to.equal(1);
    await until('listening again', async () => listening === 2, WAIT);
    expect(await heardUpTo('after-terminate')).to.deep.equal([]);
    expect(await sessions()).to.equal(1);
  });

  it('comes back after a server restart, and hears', async () => {
    listener = start();
    await until('listening', async () => listening === 1, WAIT);
    await fdb.restart();
    await until('listening again', async () => listening >= 2, WAIT);
    expect(await heardUpTo('after-restart')).to.deep.equal([]);
    expect(await sessions()).to.equal(1);
  });

  it('stops when its signal aborts: the session ends and it does not come back', async () => {
    const ac = new AbortController();
    listener = start(ac.signal);
    await until('listening', async () => listening === 1, WAIT);
    expect(await sessions()).to.equal(1);
    ac.abort();
    await until('the session ended', async () => (await sessions()) === 0, WAIT);
    // A second listener on the same pool: it alone is connected, and the mark is heard once.
    const second = start();
    await until('the second listening', async () => listening === 1, WAIT);
    expect(await heardUpTo('second')).to.deep.equal([]);
    expect(await sessions()).to.equal(1);
    expect(heard.filter((d) => d === 'second')).to.have.length(1);
    await second.stop();
    await until('no session left', async () => (await sessions()) === 0, WAIT);
  });

  it('a listener started with an aborted signal never connects', async () => {
    const ac = new AbortController();
    ac.abort();
    listener = start(ac.signal);
    const second = start();
    await until('the second listening', async () => listening === 1, WAIT);
    expect(await heardUpTo('mark')).to.deep.equal([]);
    expect(await sessions()).to.equal(1);
    expect(heard.filter((d) => d === 'mark')).to.have.length(1);
    await second.stop();
  });
});
