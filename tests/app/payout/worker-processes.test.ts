// Real `oncepay payout worker` processes on one database against the localnet: three of them share the payouts
// while one is SIGKILLed mid-payout (after its attempt was sent, before the send was recorded); a SIGTERM drain
// that finishes what is in flight, and one that hands back what cannot finish. Every payout is checked on chain
// (recipient balance, one successful transaction on its op account) and in the journal.
import { expect } from 'chai';
import * as os from 'os';
import { Keypair, PublicKey } from '@solana/web3.js';
import { createPayout } from '../../../app/payout/create-payout';
import { listAttempts, PayoutRow } from '../../../app/payout/store';
import { currentSuite, expectNoSecretShown, passwordOf, RPC_API_KEY, withApiKey } from '../../faults/secrets';
import { Proc, startOncepay } from '../../faults/support';
import { stderrJson } from '../../indexer/cli/run-cli';
import { connectionIo, createTokenAccount } from '../../../testkit/payout/setup';
import { requireLocalnet } from '../../../testkit/node';
import {
  expectExactlyOneTransfer,
  expectJournalConsistent,
  PayoutLocalnet,
  startPayoutLocalnet,
  until,
} from './localnet-setup';

const SPAWN_TIMEOUT_MS = 180_000;

describe('app/payout worker processes (localnet, SIGKILL, SIGTERM)', function () {
  this.timeout(600_000);
  let L: PayoutLocalnet;
  const running: Proc[] = [];
  let seq = 0;

  before(async () => {
    L = await startPayoutLocalnet('app_worker_procs');
  });
  after(async () => {
    for (const w of running) if (w.alive()) w.child.kill('SIGKILL');
    await Promise.all(running.map((w) => w.done));
    await L?.stop();
  });
  afterEach(async () => {
    L?.net.localnet?.faults.clear();
    // A test that failed or timed out may leave its workers running, and they would pay the next test's payouts:
    // stop them, and leave nothing due for the next test's workers.
    for (const w of running) if (w.alive()) w.child.kill('SIGKILL');
    await Promise.all(running.map((w) => w.done));
    running.length = 0;
    await L?.db.pool.query(
      `UPDATE payouts SET state = 'failed', last_error = 'test cleanup' WHERE state IN ('pending', 'executing')`,
    );
  });

  function worker(extra: string[] = [], env: Record<string, string> = {}): Proc {
    const w = startOncepay(
      [
        'payout',
        'worker',
        '--authority',
        L.authorityFile,
        '--poll-ms',
        '20',
        '--idle-ms',
        '20',
        '--metrics-port',
        '0',
        ...extra,
      ],
      // The RPC URL with a provider's API key, in the environment (not --rpc): the suite's last case checks it.
      { ...L.db.env, ONCEPAY_LOG_LEVEL: 'info', ONCEPAY_RPC_URL: withApiKey(L.net.url), ...env },
    );
    running.push(w);
    return w;
  }
  /** Its JSON log lines so far (complete lines only: the last one may still be being written). */
  const logs = (w: Proc) =>
    stderrJson({ code: null, signal: null, stdout: '', stderr: w.stderr().slice(0, w.stderr().lastIndexOf('\n') + 1) });
  const started = (w: Proc) => logs(w).some((l) => l.msg === 'payout worker started') || !w.alive();
  const metricsUrl = (w: Proc) => logs(w).find((l) => l.msg === 'serving metrics')?.url as string | undefined;

  /** Recipient token accounts (each one a transaction on the localnet). */
  async function recipients(n: number): Promise<PublicKey[]> {
    const out: PublicKey[] = [];
    for (let i = 0; i < n; i++)
      out.push(
        await createTokenAccount(connectionIo(L.connection), L.m.authority, L.m.mint, Keypair.generate().publicKey),
      );
    return out;
  }

  /** Payout rows for them, stored in one quick burst so every worker sees them at once. */
  async function store(to: PublicKey[], amount = '1000'): Promise<Array<{ row: PayoutRow; recipient: PublicKey }>> {
    const out: Array<{ row: PayoutRow; recipient: PublicKey }> = [];
    for (const recipient of to) {
      const { row } = await createPayout(L.db.pool, L.merchant, {
        payoutId: `wp-${++seq}`,
        recipient: recipient.toBase58(),
        mint: L.m.mint.toBase58(),
        amount,
      });
      out.push({ row, recipient });
    }
    return out;
  }

  const payouts = async (n: number) => store(await recipients(n));

  const states = async (ids: string[]) =>
    (
      await L.db.pool.query(
        `SELECT state, count(*)::int AS n FROM payouts WHERE id = ANY($1::bigint[]) GROUP BY state`,
        [ids],
      )
    ).rows as Array<{ state: string; n: number }>;
  const allSucceeded = async (ids: string[]) => {
    const s = await states(ids);
    return s.length === 1 && s[0].state === 'succeeded' && s[0].n === ids.length;
  };

  it('three workers, one SIGKILLed after sending an attempt and before recording it: the others pay everything, each exactly once', async () => {
    const a = worker(['--concurrency', '3']);
    // One worker fetches a blockhash per attempt (the others share one for 250 ms, the default).
    const b = worker(['--concurrency', '3', '--blockhash-max-age-ms', '0']);
    // One slot, so the payout it dies on is the one it logged.
    const c = worker(['--concurrency', '1'], { ONCEPAY_FAILPOINT: 'payout.after_send_before_record' });
    await until(async () => [a, b, c].every(started), 'three workers started', SPAWN_TIMEOUT_MS);
    const maxAge = (w: Proc) => logs(w).find((l) => l.msg === 'payout worker started')?.blockhashMaxAgeMs;
    expect([maxAge(a), maxAge(b)]).to.deep.equal([250, 0]);
    const ps = await payouts(12);
    const ids = ps.map((p) => p.row.id);

    const killed = await c.done;
    expect(killed.signal, killed.stderr).to.equal('SIGKILL');
    expect(killed.stderr).to.contain('payout.after_send_before_record');
    const persisted = logs(c).filter((l) => l.msg === 'attempt persisted');
    expect(persisted).to.have.length(1);
    const victim = { id: String(persisted[0].payout), signature: String(persisted[0].signature) };
    expect(ids).to.include(victim.id);

    await until(() => allSucceeded(ids), 'every payout to succeed', 120_000);
    for (const { row, recipient } of ps) {
      await expectExactlyOneTransfer(L.connection, row, recipient);
      await expectJournalConsistent(L.db, L.connection, row);
    }
    // The victim's attempt was sent before the crash: it landed as it was, never re-signed, finished by another worker.
    const journal = await listAttempts(L.db.pool, victim.id);
    expect(journal.map((x) => [x.signature, x.status])).to.deep.equal([[victim.signature, 'landed']]);
    const victimRow = (await L.db.pool.query('SELECT claims, claimed_by FROM payouts WHERE id = $1', [victim.id]))
      .rows[0];
    expect(victimRow.claims).to.be.at.least(2);
    expect(victimRow.claimed_by).to.not.equal(`${os.hostname()}:${c.child.pid}`); // claimed again by a survivor
    // Both survivors claimed work and export the gauges; nothing is left uncertain.
    for (const w of [a, b]) {
      const text = await (await fetch(metricsUrl(w)!)).text();
      expect(text).to.match(/oncepay_payout_worker_claims_total\{result="claimed"\} [1-9]/);
      expect(text).to.match(/^oncepay_payout_uncertain_attempts 0$/m);
      expect(text).to.match(/^oncepay_payout_oldest_uncertain_attempt_age_seconds 0$/m);
      expect(text).to.match(/^oncepay_payout_conflicts_total 0$/m);
      // The shared health handler on the same port: alive, and ready (database reachable, migrations applied).
      expect((await fetch(metricsUrl(w)!.replace(/\/metrics$/, '/healthz'))).status).to.equal(200);
      expect((await fetch(metricsUrl(w)!.replace(/\/metrics$/, '/readyz'))).status).to.equal(200);
    }

    for (const w of [a, b]) w.child.kill('SIGTERM');
    for (const w of [a, b]) {
      const r = await w.done;
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.deep.equal({ handedBack: [] });
    }
  });

  it('SIGTERM while payouts are in flight: they finish within the drain, nothing new is claimed, exit 0', async () => {
    const w = worker(['--concurrency', '4', '--drain-ms', '60000']);
    await until(async () => started(w), 'the worker started', SPAWN_TIMEOUT_MS);
    const to = await recipients(4);
    // Each first send is answered only after a while (it executes at once): the payouts are in flight at SIGTERM. On a
    // real validator (testkit/node) its 400 ms slots keep them in flight without the delay.
    L.net.localnet?.faults.dropNextResponses({ method: 'sendTransaction', mode: 'delay', delayMs: 1500, count: 4 });
    const inFlight = await store(to);
    await until(
      async () =>
        (
          await L.db.pool.query(`SELECT count(*)::int AS n FROM payout_attempts WHERE payout_id = ANY($1::bigint[])`, [
            inFlight.map((p) => p.row.id),
          ])
        ).rows[0].n === 4,
      'four attempts persisted',
    );
    w.child.kill('SIGTERM');
    const later = await payouts(2); // stored after the stop: not claimed by this worker
    const r = await w.done;
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ handedBack: [] });
    for (const { row, recipient } of inFlight) {
      await expectExactlyOneTransfer(L.connection, row, recipient);
      await expectJournalConsistent(L.db, L.connection, row);
    }
    expect(await states(later.map((p) => p.row.id))).to.deep.equal([{ state: 'pending', n: 2 }]);
    await L.db.pool.query(
      `UPDATE payouts SET state = 'failed', last_error = 'test cleanup' WHERE id = ANY($1::bigint[])`,
      [later.map((p) => p.row.id)],
    );
  });

  it('SIGTERM when in-flight payouts cannot finish: handed back within --drain-ms, exit 0; the next worker resolves the sent attempts once', async function () {
    const net = requireLocalnet(this, L.net, "status reads that fail until told otherwise need localnet's faults");
    // Chain trouble never hands them back here: they stay in flight until the drain.
    const w = worker(['--concurrency', '3', '--drain-ms', '500', '--max-chain-failures', '1000000']);
    await until(async () => started(w), 'the worker started', SPAWN_TIMEOUT_MS);
    const to = await recipients(3);
    // Sends go through (and execute), but no status can be read: the outcomes stay unknown.
    net.faults.failNext({ kind: '500', method: 'getSignatureStatuses', count: 1_000_000 });
    const ps = await store(to);
    const ids = ps.map((p) => p.row.id);
    await until(
      async () =>
        (
          await L.db.pool.query(
            `SELECT count(*)::int AS n FROM payout_attempts WHERE status = 'sent' AND payout_id = ANY($1::bigint[])`,
            [ids],
          )
        ).rows[0].n === 3,
      'three attempts sent',
    );
    w.child.kill('SIGTERM');
    const r = await w.done;
    expect(r.code, r.stderr).to.equal(0);
    expect([...JSON.parse(r.stdout).handedBack].sort()).to.deep.equal([...ids].sort());
    // Not silently: each hand-back names the attempt left open.
    const handed = logs(w).filter((l) => String(l.msg).startsWith('stopping: payout handed back'));
    expect(handed.map((l) => String(l.payout)).sort()).to.deep.equal([...ids].sort());
    for (const l of handed) expect((l.open as Array<{ status: string }>).map((x) => x.status)).to.deep.equal(['sent']);
    const sent = new Map<string, string>();
    for (const id of ids) sent.set(id, (await listAttempts(L.db.pool, id))[0].signature);

    net.faults.clear();
    const next = worker(['--concurrency', '3']);
    await until(() => allSucceeded(ids), 'the next worker to finish them', SPAWN_TIMEOUT_MS);
    for (const { row, recipient } of ps) {
      await expectExactlyOneTransfer(L.connection, row, recipient);
      await expectJournalConsistent(L.db, L.connection, row);
      expect((await listAttempts(L.db.pool, row.id)).map((x) => x.signature)).to.deep.equal([sent.get(row.id)]);
    }
    next.child.kill('SIGTERM');
    expect((await next.done).code).to.equal(0);
  });

  it('no process of this suite showed a secret it was configured with: not the RPC API key or the database password, in its output or its command line', () => {
    expectNoSecretShown(currentSuite(), [RPC_API_KEY, passwordOf(L.db.url)]);
  });
});
