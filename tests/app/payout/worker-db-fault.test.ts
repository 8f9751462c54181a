// `oncepay payout worker` through database faults, against the localnet: its PostgreSQL server (one of this
// suite's own, so no other suite is disturbed) is restarted while payouts are in flight, and then every session
// of the worker is ended with pg_terminate_backend. The process must stay up, back off, recover by itself and
// pay every payout exactly once; on SIGTERM it still drains and exits 0.
import { expect } from 'chai';
import { Keypair, PublicKey } from '@solana/web3.js';
import { createPayout } from '../../../app/payout/create-payout';
import { PayoutRow } from '../../../app/payout/store';
import { FaultDb, startFaultDb, startOncepay, waitFor } from '../../faults/support';
import { currentSuite, expectNoSecretShown, passwordOf, RPC_API_KEY, withApiKey } from '../../faults/secrets';
import { stderrJson } from '../../indexer/cli/run-cli';
import { connectionIo, createTokenAccount } from '../../../testkit/payout/setup';
import {
  expectExactlyOneTransfer,
  expectJournalConsistent,
  PayoutLocalnet,
  startPayoutLocalnet,
} from './localnet-setup';

const APP = 'oncepay-payout-worker';
const SPAWN_TIMEOUT_MS = 180_000;

describe('app/payout worker through a PostgreSQL restart and pg_terminate_backend (own server, localnet)', function () {
  this.timeout(600_000);
  let fdb: FaultDb;
  let L: PayoutLocalnet;
  let seq = 0;

  before(async () => {
    fdb = await startFaultDb('payout_worker');
    L = await startPayoutLocalnet('app_worker_dbfault', { db: async () => ({ ...fdb, drop: async () => undefined }) });
  });
  after(async () => {
    await L?.stop();
    await fdb?.close();
  });

  async function payouts(n: number): Promise<Array<{ row: PayoutRow; recipient: PublicKey }>> {
    const out: Array<{ row: PayoutRow; recipient: PublicKey }> = [];
    for (let i = 0; i < n; i++) {
      const recipient = await createTokenAccount(
        connectionIo(L.connection),
        L.m.authority,
        L.m.mint,
        Keypair.generate().publicKey,
      );
      out.push({
        recipient,
        row: (
          await createPayout(fdb.pool, L.merchant, {
            payoutId: `wf-${++seq}`,
            recipient: recipient.toBase58(),
            mint: L.m.mint.toBase58(),
            amount: '1000',
          })
        ).row,
      });
    }
    return out;
  }
  // Sends answered late keep payouts in flight while the database fails; a real validator's 400 ms slots do that by
  // themselves (testkit/node: no fault injection there).
  const delaySends = () =>
    L.net.localnet?.faults.dropNextResponses({ method: 'sendTransaction', mode: 'delay', delayMs: 1500, count: 3 });
  const count = async (sql: string, ids: string[]) =>
    (await fdb.pool.query(`SELECT count(*)::int AS n FROM ${sql}`, [ids])).rows[0].n as number;
  const succeeded = (ids: string[]) => count(`payouts WHERE state = 'succeeded' AND id = ANY($1::bigint[])`, ids);

  it('stays up through a restart and terminated sessions under load, recovers by itself, pays each payout once', async () => {
    const w = startOncepay(
      [
        'payout',
        'worker',
        '--authority',
        L.authorityFile,
        '--concurrency',
        '3',
        '--poll-ms',
        '20',
        '--idle-ms',
        '50',
        '--drain-ms',
        '10000',
      ],
      // The RPC URL with a provider's API key, in the environment (not --rpc): the suite's last case checks it.
      { ...fdb.env, ONCEPAY_LOG_LEVEL: 'info', ONCEPAY_RPC_URL: withApiKey(L.net.url) },
    );
    try {
      await waitFor(
        () => w.stderr().includes('payout worker started') || !w.alive(),
        'the worker to start',
        SPAWN_TIMEOUT_MS,
      );
      expect(w.alive(), w.stderr()).to.equal(true);

      // 1. A restart while payouts are in flight (their sends answered late, so they are mid-payout when it stops).
      delaySends();
      const first = await payouts(6);
      const firstIds = first.map((p) => p.row.id);
      await waitFor(
        async () => (await count('payout_attempts WHERE payout_id = ANY($1::bigint[])', firstIds)) >= 2,
        'payouts in flight',
      );
      await fdb.restart(() => new Promise((r) => setTimeout(r, 1500)));
      await waitFor(
        async () => (await succeeded(firstIds)) === firstIds.length,
        'the first payouts to succeed after the restart',
        120_000,
      );
      expect(w.alive(), w.stderr()).to.equal(true);

      // 2. Every session of the worker ended by the server, again mid-payout.
      delaySends();
      const second = await payouts(6);
      const secondIds = second.map((p) => p.row.id);
      await waitFor(
        async () => (await count('payout_attempts WHERE payout_id = ANY($1::bigint[])', secondIds)) >= 2,
        'payouts in flight',
      );
      expect(await fdb.terminate(APP)).to.be.greaterThan(0);
      await waitFor(
        async () => (await succeeded(secondIds)) === secondIds.length,
        'the second payouts to succeed after the terminations',
        120_000,
      );
      expect(w.alive(), w.stderr()).to.equal(true);

      for (const { row, recipient } of [...first, ...second]) {
        await expectExactlyOneTransfer(L.connection, row, recipient);
        await expectJournalConsistent(L.db, L.connection, row);
      }
      // It saw the outage (and said so) rather than missing it.
      const logs = stderrJson({
        code: null,
        signal: null,
        stdout: '',
        stderr: w.stderr().slice(0, w.stderr().lastIndexOf('\n') + 1),
      });
      expect(logs.some((l) => String(l.msg).startsWith('database unavailable'))).to.equal(true);
    } finally {
      w.child.kill('SIGTERM');
    }
    const r = await w.done;
    expect(r.code, r.stderr).to.equal(0);
  });

  it('no process of this suite showed a secret it was configured with: not the RPC API key or the database password, in its output or its command line', () => {
    expectNoSecretShown(currentSuite(), [RPC_API_KEY, passwordOf(fdb.url)]);
  });
});
