// Tenancy of the payout worker pool, in-process against the localnet: two merchants on one database. A worker claims
// only the payouts of the merchants whose on-chain payout authority is one of its keys (it never signs another
// merchant's payout, so none lands failed with Unauthorized); a worker with several keys signs each payout with its
// own merchant's key; and a payout refused on chain as Unauthorized — the merchant rotated its payout authority after
// the worker read it — is handed back (never failed), counted and logged, and the worker holding the new key pays it,
// whichever executor runs the payout (fast or plain: both hand it back through run-control.ts).
import { expect } from 'chai';
import { Keypair, Transaction } from '@solana/web3.js';
import { Pool } from 'pg';
import { createPool } from '../../../db/pool';
import { createConnectionChain } from '../../../app/payout/chain';
import { setPayoutAuthorityInstruction } from '../../../app/merchant/instructions';
import { getPayout, listAttempts, PayoutRow } from '../../../app/payout/store';
import { PayoutResult } from '../../../app/payout/run-payout';
import { PayoutWorker, PayoutWorkerOptions, startPayoutWorker } from '../../../app/payout/worker';
import { readSigners } from '../../../app/payout/signers';
import { EXECUTOR_NAMES, executorNamed } from '../../../app/payout/executor';
import { connectionIo } from '../../../testkit/payout/setup';
import {
  expectExactlyOneTransfer,
  expectJournalConsistent,
  PayoutLocalnet,
  startPayoutLocalnet,
  TenantMerchant,
  metricValue,
  until,
} from './localnet-setup';

/** The fee payer of an attempt's transaction: its first account key (the signer when no --payer is given). */
function signerOf(txBytes: Buffer): string {
  return Transaction.from(txBytes).feePayer!.toBase58();
}

describe('app/payout worker pool: two merchants on one database (in-process, localnet)', () => {
  let L: PayoutLocalnet;
  let B: TenantMerchant;
  const pools: Pool[] = [];
  const workers: PayoutWorker[] = [];

  before(async () => {
    L = await startPayoutLocalnet('app_tenancy');
    B = await L.addMerchant('b');
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop({ graceMs: 1_000 })));
    await Promise.all(pools.map((p) => p.end()));
    await L?.stop();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 2_000 })));
    await L.db.pool.query(
      `UPDATE payouts SET state = 'failed', last_error = 'test cleanup' WHERE state IN ('pending', 'executing')`,
    );
  });

  const worker = (o: Partial<PayoutWorkerOptions> & Pick<PayoutWorkerOptions, 'authority'>, seen?: PayoutResult[]) => {
    const db = createPool({ url: L.db.url, schema: L.db.schema, max: 4 });
    pools.push(db);
    const w = startPayoutWorker({
      db,
      chain: createConnectionChain({ connection: L.connection }),
      concurrency: 2,
      pollIntervalMs: 20,
      rebroadcastIntervalMs: 100,
      idleMs: 20,
      onFinished: seen ? (r) => seen.push(r) : undefined,
      ...o,
    });
    workers.push(w);
    return w;
  };
  const finishedAll = (seen: PayoutResult[], rows: PayoutRow[]) => () =>
    Promise.resolve(rows.every((r) => seen.some((x) => x.id === r.id)));

  it("the merchants a key signs for are read from the chain: each key its own merchant's, none another's", async () => {
    const a = await readSigners(L.db.pool, createConnectionChain({ connection: L.connection }), [L.m.authority]);
    expect([...a.byMerchant.keys()]).to.deep.equal([L.merchant.id]);
    expect(a.merchants.map((m) => [m.id, m.signable])).to.deep.equal([
      [L.merchant.id, true],
      [B.merchant.id, false],
    ]);
    const stranger = await readSigners(L.db.pool, createConnectionChain({ connection: L.connection }), [
      Keypair.generate(),
    ]);
    expect(stranger.byMerchant.size).to.equal(0);
  });

  it("a worker with merchant A's key claims A's payouts only: B's stay pending, untouched (no attempt, no fee)", async () => {
    const mine = [await L.newPayout(), await L.newPayout()];
    const theirs = [await B.newPayout(), await B.newPayout()];
    const seen: PayoutResult[] = [];
    worker({ authority: L.m.authority }, seen);
    await until(
      finishedAll(
        seen,
        mine.map((p) => p.row),
      ),
      "A's payouts paid by A's worker",
    );
    // Give it every chance to take B's: several idle polls later, still nothing of B's was claimed or signed.
    const claimsBefore = await metricValue('oncepay_payout_worker_claims_total', { result: 'empty' });
    await until(
      async () => (await metricValue('oncepay_payout_worker_claims_total', { result: 'empty' })) > claimsBefore + 5,
      'a few empty claims',
    );
    for (const { row, recipient } of mine) {
      await expectExactlyOneTransfer(L.connection, row, recipient);
      await expectJournalConsistent(L.db, L.connection, row);
    }
    for (const { row } of theirs) {
      const p = (await getPayout(L.db.pool, row.id))!;
      expect([p.state, p.claimedBy, await listAttempts(L.db.pool, row.id)]).to.deep.equal(['pending', null, []]);
    }
    expect(seen.map((r) => r.id).sort()).to.deep.equal(mine.map((p) => p.row.id).sort());
  });

  it("a worker holding both keys pays both merchants' payouts, each signed by its own merchant's payout authority", async () => {
    const a = await L.newPayout();
    const b = await B.newPayout();
    const seen: PayoutResult[] = [];
    worker({ authority: [L.m.authority, B.m.authority] }, seen);
    await until(finishedAll(seen, [a.row, b.row]), 'both payouts paid');
    for (const [{ row, recipient }, key] of [
      [a, L.m.authority],
      [b, B.m.authority],
    ] as const) {
      await expectExactlyOneTransfer(L.connection, row, recipient);
      await expectJournalConsistent(L.db, L.connection, row);
      const attempts = await listAttempts(L.db.pool, row.id);
      expect(attempts.map((x) => signerOf(x.txBytes))).to.deep.equal([key.publicKey.toBase58()]);
    }
  });

  // B's payout authority as the last rotation left it (each case below rotates it once more).
  let bPayoutAuthority: Keypair;
  before(() => (bPayoutAuthority = B.m.authority));

  for (const executor of EXECUTOR_NAMES)
    it(`a payout refused on chain as Unauthorized (authority rotated after the worker read it) is handed back, not failed; the new key pays it (the ${executor} executor)`, async () => {
      // B's worker reads its merchants once (a refresh an hour away), then B rotates its payout authority (signed by
      // B's merchant authority).
      const stale = bPayoutAuthority;
      const old = worker({ authority: stale, merchantsRefreshMs: 3_600_000, executor: executorNamed(executor) });
      await until(async () => old.merchants().includes(B.merchant.id), "the worker to claim B's payouts");
      const rotated = Keypair.generate();
      await connectionIo(L.connection).fund(rotated.publicKey);
      await connectionIo(L.connection).send(
        [setPayoutAuthorityInstruction(B.m.programId, B.m.authority.publicKey, rotated.publicKey)],
        [B.m.authority],
      );
      bPayoutAuthority = rotated;
      const handbacksBefore = await metricValue('oncepay_payout_worker_handbacks_total', { reason: 'unauthorized' });
      const { row, recipient } = await B.newPayout();
      // The stale worker claims it, signs with the old key, the program refuses it (6001): handed back, still due.
      const refused = await until(async () => {
        const attempts = await listAttempts(L.db.pool, row.id);
        return attempts.find((x) => x.status === 'failed');
      }, 'the refused attempt');
      expect(refused.error).to.equal('Unauthorized (6001)');
      await until(
        async () =>
          (await metricValue('oncepay_payout_worker_handbacks_total', { reason: 'unauthorized' })) > handbacksBefore,
        'the hand-back counted',
      );
      const handedBack = (await getPayout(L.db.pool, row.id))!;
      expect(handedBack.state).to.equal('executing');
      expect(handedBack.lastError).to.equal('Unauthorized (6001)');
      await old.stop({ graceMs: 2_000 });
      expect((await listAttempts(L.db.pool, row.id)).length, 'the stale worker stopped claiming it').to.equal(1);

      // The worker holding the new payout authority pays it, once; the journal keeps the refused attempt.
      const seen: PayoutResult[] = [];
      worker({ authority: rotated, executor: executorNamed(executor) }, seen);
      await until(finishedAll(seen, [row]), 'the payout paid by the new key');
      await expectExactlyOneTransfer(L.connection, row, recipient);
      const attempts = await listAttempts(L.db.pool, row.id);
      expect(attempts.map((x) => [x.status, signerOf(x.txBytes)])).to.deep.equal([
        ['failed', stale.publicKey.toBase58()],
        ['landed', rotated.publicKey.toBase58()],
      ]);
      expect((await getPayout(L.db.pool, row.id))!.state).to.equal('succeeded');
    });
});
