// The compiled program in solana-bankrun: the on-chain guard and the conflict rules, seen through the executor.
import { expect } from 'chai';
import { Keypair, PublicKey } from '@solana/web3.js';
import { ProgramTestContext } from 'solana-bankrun';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { buildApiApp } from '../../../app/api/build-api-app';
import { createPayout } from '../../../app/payout/create-payout';
import { RunPayoutDeps, runPayout } from '../../../app/payout/run-payout';
import { lockPayout } from '../../../app/payout/lock';
import { resumePayouts } from '../../../app/payout/resume';
import { payoutMetrics } from '../../../app/payout/metrics';
import { decodeOpAccount } from '../../../app/payout/program';
import { insertMerchant, MerchantRow } from '../../../app/merchant/store';
import { listAttempts } from '../../../app/payout/store';
import { address } from '../../../app/types';
import { bankrunChain, bankrunIo, bankrunTokenBalance, startBankrun } from '../../../testkit/payout/bankrun-chain';
import { createTokenAccount, MerchantSetup, setupMerchant } from '../../../testkit/payout/setup';

describe('app/payout on the compiled program (solana-bankrun)', () => {
  let ctx: ProgramTestContext;
  let m: MerchantSetup;
  let recipient: PublicKey;
  let dbA: TestDb;
  let dbB: TestDb;
  let dbC: TestDb;
  let merchantC: MerchantRow;
  const payerB = Keypair.generate();
  let merchantA: MerchantRow;
  let merchantB: MerchantRow;

  before(async () => {
    ctx = await startBankrun();
    const io = bankrunIo(ctx);
    m = await setupMerchant(io);
    recipient = await createTokenAccount(io, m.authority, m.mint, Keypair.generate().publicKey);
    await io.fund(payerB.publicKey);
    // Two journals (two databases' worth of rows) for the same merchant: only the chain is shared.
    dbA = await createTestDb('app_bankrun_a');
    dbB = await createTestDb('app_bankrun_b');
    dbC = await createTestDb('app_bankrun_c');
    const row = {
      name: 'm',
      programId: address(m.programId),
      merchantAddress: address(m.merchant),
      vault: address(m.vault),
    };
    merchantA = await insertMerchant(dbA.pool, { ...row, apiKeyHash: hashApiKey('bankrun-key-a-0000000') });
    merchantB = await insertMerchant(dbB.pool, { ...row, apiKeyHash: hashApiKey('bankrun-key-b-0000000') });
    merchantC = await insertMerchant(dbC.pool, { ...row, apiKeyHash: hashApiKey('bankrun-key-c-0000000') });
  });
  after(async () => {
    await dbA?.drop();
    await dbB?.drop();
    await dbC?.drop();
  });

  const deps = (db: TestDb) => ({ db: db.pool, chain: bankrunChain(ctx), authority: m.authority, pollIntervalMs: 10 });
  const balances = async () => ({
    vault: await bankrunTokenBalance(ctx, m.vault),
    recipient: await bankrunTokenBalance(ctx, recipient),
  });

  it('executes a payout once: one attempt, one transfer, the op account records the row', async () => {
    const before = await balances();
    const { row } = await createPayout(dbA.pool, merchantA, {
      payoutId: 'po-1',
      recipient: recipient.toBase58(),
      mint: m.mint.toBase58(),
      amount: '1000',
    });
    const r = await runPayout(row, deps(dbA));
    expect(r!.state).to.equal('succeeded');
    const after = await balances();
    expect(after.recipient - before.recipient).to.equal(1000n);
    expect(before.vault - after.vault).to.equal(1000n);
    const attempts = await listAttempts(dbA.pool, row.id);
    expect(attempts.map((a) => a.status)).to.deep.equal(['landed']);
    expect(r!.signature).to.equal(attempts[0].signature);
    const op = decodeOpAccount((await ctx.banksClient.getAccount(new PublicKey(row.opPda)))!.data);
    expect(op).to.include({
      opId: row.opId,
      merchant: m.merchant.toBase58(),
      recipient: recipient.toBase58(),
      mint: m.mint.toBase58(),
      amount: 1000n,
    });
    expect(r!.slot).to.equal(op.slot.toString());
  });

  it('GET /v1/payouts/:id shows the executed payout: attempts and on-chain proof (signature, slot, op account)', async () => {
    const app = await buildApiApp({ db: dbA.pool });
    try {
      const id = String((await dbA.pool.query(`SELECT id FROM payouts WHERE merchant_payout_id = 'po-1'`)).rows[0].id);
      const r = await app.inject({
        method: 'GET',
        url: `/v1/payouts/${id}`,
        headers: { authorization: 'Bearer bankrun-key-a-0000000' },
      });
      expect(r.statusCode).to.equal(200);
      const v = r.json();
      const [attempt] = await listAttempts(dbA.pool, id);
      expect(v.state).to.equal('succeeded');
      expect(v.proof).to.deep.equal({ signature: attempt.signature, slot: attempt.slot!.toString(), opPda: v.opPda });
      expect(v.attempts).to.have.length(1);
      expect(v.attempts[0]).to.include({
        attemptNo: 1,
        signature: attempt.signature,
        status: 'landed',
        slot: attempt.slot!.toString(),
      });
    } finally {
      await app.close();
    }
  });

  it('executing the finished row again changes nothing', async () => {
    const before = await balances();
    const row = (await dbA.pool.query(`SELECT id FROM payouts WHERE merchant_payout_id = 'po-1'`)).rows[0];
    const r = await runPayout({ id: String(row.id) }, deps(dbA));
    expect(r!.state).to.equal('succeeded');
    expect(await balances()).to.deep.equal(before);
    expect(await listAttempts(dbA.pool, String(row.id))).to.have.length(1);
  });

  it('another journal with the same payout id and the same terms: its first attempt meets the op account and pays nothing', async () => {
    const before = await balances();
    const { row } = await createPayout(dbB.pool, merchantB, {
      payoutId: 'po-1',
      recipient: recipient.toBase58(),
      mint: m.mint.toBase58(),
      amount: '1000',
    });
    const r = await runPayout(row, deps(dbB));
    expect(r!.state).to.equal('succeeded');
    expect(await balances()).to.deep.equal(before);
    // Journal B never signed for this op, so its first attempt is sent without reading the op account (rule 1):
    // the program refuses it with OperationAlreadyConsumed (nothing moves), and B settles from the op account.
    const attempts = await listAttempts(dbB.pool, row.id);
    expect(attempts.map((a) => [a.status, a.error])).to.deep.equal([['failed', 'OperationAlreadyConsumed']]);
  });

  it('a row that disagrees with the op account (other amount, same payout id) → conflict, flagged, nothing paid', async () => {
    const before = await balances();
    // A third journal re-uses payout id po-1 for another amount (e.g. a restored backup, a reused id).
    const { row } = await createPayout(dbC.pool, merchantC, {
      payoutId: 'po-1',
      recipient: recipient.toBase58(),
      mint: m.mint.toBase58(),
      amount: '999',
    });
    const conflicts = (await payoutMetrics().conflicts.get()).values[0]?.value ?? 0;
    const r = await runPayout(row, deps(dbC));
    expect(r!.state).to.equal('conflict');
    expect((await payoutMetrics().conflicts.get()).values[0]?.value).to.equal(conflicts + 1); // oncepay_payout_conflicts_total
    const c = r!.conflict as { mismatches: Array<{ field: string; row: string; chain: string }> };
    expect(c.mismatches).to.deep.equal([{ field: 'amount', row: '999', chain: '1000' }]);
    expect(await balances()).to.deep.equal(before);
    // Flagged, not "fixed": a second run keeps the conflict and still pays nothing.
    const again = await runPayout(row, deps(dbC));
    // One attempt, from the first run (refused by the program: the op was consumed), none from the second.
    const attempts = await listAttempts(dbC.pool, row.id);
    expect(attempts.map((a) => [a.status, a.error])).to.deep.equal([['failed', 'OperationAlreadyConsumed']]);
    expect(again!.state).to.equal('conflict');
    expect(await balances()).to.deep.equal(before);
  });

  it('two journals racing on one op: the program lets exactly one transfer through, the loser gets 6000 and ends succeeded too', async () => {
    const before = await balances();
    const terms = { payoutId: 'po-race', recipient: recipient.toBase58(), mint: m.mint.toBase58(), amount: '77' };
    const a = (await createPayout(dbA.pool, merchantA, terms)).row;
    const b = (await createPayout(dbB.pool, merchantB, terms)).row;
    // Both journals check the op account (absent) and sign before either send reaches the bank: hold the
    // sends until both are there, then let them through in turn. The bank decides who wins.
    const chain = bankrunChain(ctx);
    const waiting: Array<() => void> = [];
    let released = false;
    const raced = {
      ...chain,
      async sendRawTransaction(bytes: Uint8Array) {
        if (!released) {
          await new Promise<void>((go) => {
            waiting.push(go);
            if (waiting.length === 2) {
              released = true;
              waiting.forEach((f) => f());
            }
          });
        }
        return chain.sendRawTransaction(bytes);
      },
    };
    const [ra, rb] = await Promise.all([
      runPayout(a, { ...deps(dbA), chain: raced }),
      // Another worker with its own fee payer: a distinct transaction (same signer set + blockhash would make
      // the two byte-identical, i.e. one transaction).
      runPayout(b, { ...deps(dbB), chain: raced, payer: payerB }),
    ]);
    expect(ra!.state).to.equal('succeeded');
    expect(rb!.state).to.equal('succeeded');
    expect(ra!.slot).to.equal(rb!.slot);
    expect((await balances()).recipient - before.recipient).to.equal(77n);
    const all = [...(await listAttempts(dbA.pool, a.id)), ...(await listAttempts(dbB.pool, b.id))];
    expect(all).to.have.length(2);
    expect(all.filter((x) => x.status === 'landed')).to.have.length(1);
    const loser = all.find((x) => x.status !== 'landed')!;
    expect(loser).to.include({ status: 'failed', error: 'OperationAlreadyConsumed' });
    const winner = all.find((x) => x.status === 'landed')!;
    expect([ra!.signature, rb!.signature]).to.include(winner.signature);
  });

  it('a different payout row for the same recipient and amount is a second, legitimate transfer', async () => {
    const before = await balances();
    const t = { recipient: recipient.toBase58(), mint: m.mint.toBase58(), amount: '1000' };
    const r = await runPayout((await createPayout(dbA.pool, merchantA, { ...t, payoutId: 'po-2' })).row, deps(dbA));
    expect(r!.state).to.equal('succeeded');
    expect((await balances()).recipient - before.recipient).to.equal(1000n);
  });

  it('resumePayouts skips a row another worker holds, and finishes it once that worker is gone', async () => {
    const before = await balances();
    const { row } = await createPayout(dbA.pool, merchantA, {
      payoutId: 'po-resume',
      recipient: recipient.toBase58(),
      mint: m.mint.toBase58(),
      amount: '5',
    });
    const held = (await lockPayout(dbA.pool, row.id, 'skip'))!;
    try {
      const r = await resumePayouts({ ...deps(dbA), includePending: true });
      expect(r.skipped).to.deep.equal([row.id]);
      expect(await balances()).to.deep.equal(before);
    } finally {
      await held.release();
    }
    const r2 = await resumePayouts({ ...deps(dbA), includePending: true });
    expect(r2.results.map((x) => [x.id, x.state])).to.deep.equal([[row.id, 'succeeded']]);
    expect((await balances()).recipient - before.recipient).to.equal(5n);
    // Pending rows are left alone unless asked for.
    const { row: pending } = await createPayout(dbA.pool, merchantA, {
      payoutId: 'po-pending',
      recipient: recipient.toBase58(),
      mint: m.mint.toBase58(),
      amount: '5',
    });
    expect((await resumePayouts(deps(dbA))).results.map((x) => x.id)).to.not.include(pending.id);
  });

  it('a program error other than OperationAlreadyConsumed fails the payout without a transfer (vault too small)', async () => {
    const before = await balances();
    const t = { recipient: recipient.toBase58(), mint: m.mint.toBase58(), amount: (before.vault + 1n).toString() };
    const r = await runPayout(
      (await createPayout(dbA.pool, merchantA, { ...t, payoutId: 'po-too-big' })).row,
      deps(dbA),
    );
    expect(r!.state).to.equal('failed');
    // Stored as the IDL names it: name and number.
    expect(r!.error).to.equal('InsufficientVaultBalance (6004)');
    expect(await balances()).to.deep.equal(before);
  });

  it('a landed attempt the node no longer knows, and a failed read of the op account history: the winner is still named (found by the simulation)', async () => {
    // sim/ shrank this schedule: the attempt landed, its status is gone from the node's cache (a node without
    // the history), its blockhash expired, and the history read failed once. Read as "no history", that failure
    // settled the paying attempt as `failed: superseded` and the payout `succeeded` without its proof.
    const chain = bankrunChain(ctx);
    const before = await balances();
    const terms = { recipient: recipient.toBase58(), mint: m.mint.toBase58(), amount: '9' };
    const { row } = await createPayout(dbA.pool, merchantA, { ...terms, payoutId: 'po-history-fails' });
    // First run: the send executes in the bank, and the run is stopped before it sees the status (a crash).
    const stop = new AbortController();
    const unseen = { ...chain, signatureStatuses: async (s: string[]) => s.map(() => ({ found: false as const })) };
    const sending = {
      ...unseen,
      async sendRawTransaction(bytes: Uint8Array) {
        await chain.sendRawTransaction(bytes);
        stop.abort();
      },
    };
    await runPayout(row, { ...deps(dbA), chain: sending, signal: stop.signal }).catch(() => undefined);
    const [attempt] = await listAttempts(dbA.pool, row.id);
    expect(attempt.status).to.be.oneOf(['built', 'sent']);
    const landed = (await chain.signatureStatuses([attempt.signature]))[0];
    expect(landed.found).to.equal(true);
    // Second run: the node no longer knows the status, the blockhash has expired, the history read fails once.
    let historyReads = 0;
    const forgetful = {
      ...unseen,
      blockhashExpired: async () => true,
      async opAccountSignatures() {
        historyReads += 1;
        if (historyReads === 1) throw new Error('socket hang up');
        return [{ signature: attempt.signature, slot: landed.found ? landed.slot : 0n, err: null }];
      },
    };
    const r = await runPayout(row, { ...deps(dbA), chain: forgetful });
    expect(r!.state).to.equal('succeeded');
    expect(r!.signature).to.equal(attempt.signature);
    expect(historyReads).to.equal(2);
    const journal = await listAttempts(dbA.pool, row.id);
    expect(journal.map((a) => [a.signature, a.status])).to.deep.equal([[attempt.signature, 'landed']]);
    expect((await balances()).recipient - before.recipient).to.equal(9n);
  });

  it('the look after a pause uses the statuses the pause brought back (pauseLooking), else asks the chain', async () => {
    const chain = bankrunChain(ctx);
    let asked = 0;
    const counted = {
      ...chain,
      signatureStatuses: (sigs: Parameters<typeof chain.signatureStatuses>[0]) => {
        asked += 1;
        return chain.signatureStatuses(sigs);
      },
    };
    const pay = async (payoutId: string, pauseLooking: NonNullable<RunPayoutDeps['pauseLooking']>) => {
      asked = 0;
      const terms = { recipient: recipient.toBase58(), mint: m.mint.toBase58(), amount: '5' };
      const { row } = await createPayout(dbA.pool, merchantA, { ...terms, payoutId });
      const before = await balances();
      const r = await runPayout(row, { ...deps(dbA), chain: counted, pauseLooking });
      expect(r!.state).to.equal('succeeded');
      expect((await balances()).recipient - before.recipient).to.equal(5n);
      return asked;
    };
    // The bank executes at the send; the round that sent pauses, and the pause brings the landed status back.
    let paused = 0;
    const riding = async (sigs: Parameters<typeof chain.signatureStatuses>[0]) => {
      paused += 1;
      return chain.signatureStatuses(sigs);
    };
    expect(await pay('po-ride', riding)).to.equal(0);
    expect(paused).to.equal(1);
    // A pause that brought nothing back: the look asks the chain itself.
    expect(await pay('po-ride-2', async () => undefined)).to.equal(1);
  });
});
