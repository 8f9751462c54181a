// The payout journal suite, run on each executor (app/payout/executor.ts: the fast one, and the plain one that
// performs the same rules in their most readable form), against the localnet (JSON-RPC over LiteSVM running the
// program ONCEPAY_PROGRAM selects) with its fault injection: lost responses, failing RPC calls, blockhash expiry, and
// real SIGKILLs of the CLI at the failpoints. On a node given by ANCHOR_PROVIDER_URL (testkit/node) the cases that
// inject faults are skipped; the crashes, races and the API run there too.
import { expect } from 'chai';
import { spawn } from 'child_process';
import * as path from 'path';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { Pool } from 'pg';
import type { Context, Suite } from 'mocha';
import { requireLocalnet, TestNode } from '../../../testkit/node';
import { createPool } from '../../../db/pool';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { oncepay } from '../../indexer/cli/run-cli';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { createConnectionChain, ConnectionChainOptions, PayoutChain } from '../../../app/payout/chain';
import { createPayout } from '../../../app/payout/create-payout';
import { ExecutorName, EXECUTOR_NAMES, executorNamed } from '../../../app/payout/executor';
import { RunPayoutDeps, runPayout } from '../../../app/payout/run-payout';
import { payoutMetrics } from '../../../app/payout/metrics';
import { setPausedInstruction } from '../../../app/merchant/instructions';
import { getPayout, listAttempts, PayoutRow } from '../../../app/payout/store';
import { insertMerchant, MerchantRow } from '../../../app/merchant/store';
import { address } from '../../../app/types';
import { connectionIo, createTokenAccount, MerchantSetup, tokenBalance } from '../../../testkit/payout/setup';
import { expectExactlyOneTransfer as exactlyOne, PayoutLocalnet, startPayoutLocalnet, until } from './localnet-setup';

const ROOT = path.resolve(__dirname, '..', '..', '..');

for (const executor of EXECUTOR_NAMES)
  describe(`app/payout on the localnet (fault injection, crashes): the ${executor} executor`, function () {
    journalSuite(this, executor);
  });

function journalSuite(suite: Suite, executor: ExecutorName): void {
  // The crash tests spawn the CLI twice; each start compiles it from source (tens of seconds on a loaded machine).
  suite.timeout(300_000);
  let L: PayoutLocalnet;
  let net: TestNode;
  let connection: Connection;
  let m: MerchantSetup;
  let db: TestDb;
  let merchant: MerchantRow;
  let authorityFile: string;
  let seq = 0;

  before(async () => {
    L = await startPayoutLocalnet(`app_localnet_${executor}`);
    ({ net, connection, m, db, merchant, authorityFile } = L);
  });
  after(async () => {
    await L?.stop();
  });
  afterEach(() => net?.localnet?.faults.clear());
  /** The localnet's fault injection, or the case skipped on an external node. */
  const faults = (ctx: Context, what: string) => requireLocalnet(ctx, net, `injects ${what} (localnet's fault API)`);

  const chain = (o: Partial<ConnectionChainOptions> = {}) => createConnectionChain({ connection, ...o });
  const cliExecutor = ['--executor', executor];
  const deps = (o: Partial<RunPayoutDeps> = {}): RunPayoutDeps => ({
    db: db.pool,
    chain: chain(),
    authority: m.authority,
    pollIntervalMs: 20,
    rebroadcastIntervalMs: 100,
    executor: executorNamed(executor),
    ...o,
  });

  const sendsWithError = async () =>
    (await payoutMetrics().sends.get()).values
      .filter((v) => v.labels.outcome === 'error')
      .reduce((n, v) => n + v.value, 0);

  const newPayout = (amount?: string) => L.newPayout(amount);
  const expectExactlyOneTransfer = (row: PayoutRow, recipient: PublicKey) => exactlyOne(connection, row, recipient);

  it('lost response: the node executes, the answer never comes; the retry finds the landed signature — one transfer', async function () {
    const net = faults(this, 'a lost sendTransaction response');
    const { row, recipient } = await newPayout();
    net.faults.dropNextResponses({ method: 'sendTransaction', count: 1 });
    const failedSends = await sendsWithError();
    const r = await runPayout(row, deps());
    expect(r!.state).to.equal('succeeded');
    expect(await sendsWithError()).to.equal(failedSends + 1); // the response really was lost
    const attempts = await listAttempts(db.pool, row.id);
    expect(attempts.map((a) => a.status)).to.deep.equal(['landed']);
    expect(r!.signature).to.equal(attempts[0].signature);
    await expectExactlyOneTransfer(row, recipient);
  });

  it('RPC 500s and 429s on every read decide nothing; the payout completes once they stop', async function () {
    const net = faults(this, 'RPC 500s and 429s');
    const { row, recipient } = await newPayout();
    net.faults.failNext({ kind: '500', method: 'getSignatureStatuses', count: 5 });
    net.faults.failNext({ kind: '429', method: 'getAccountInfo', count: 3 });
    const r = await runPayout(row, deps());
    expect(r!.state).to.equal('succeeded');
    expect(await listAttempts(db.pool, row.id)).to.have.length(1);
    await expectExactlyOneTransfer(row, recipient);
  });

  it('blockhash expires while the attempt never reached the chain → op account absent → a new attempt; one transfer', async function () {
    const net = faults(this, 'failing sends and expiring blockhashes at once');
    const { row, recipient } = await newPayout();
    net.faults.failNext({ kind: '500', method: 'sendTransaction', count: 1_000_000 });
    const run = runPayout(row, deps());
    await until(async () => (await listAttempts(db.pool, row.id)).find((a) => a.status === 'sent'), 'attempt 1 sent');
    net.faults.expireBlockhashesNow();
    net.faults.clear();
    const r = await run;
    expect(r!.state).to.equal('succeeded');
    const attempts = await listAttempts(db.pool, row.id);
    expect(attempts.map((a) => a.status)).to.deep.equal(['expired', 'landed']);
    expect(attempts[0].blockhash).to.not.equal(attempts[1].blockhash);
    expect(r!.signature).to.equal(attempts[1].signature);
    await expectExactlyOneTransfer(row, recipient);
  });

  it('blockhash expires after the attempt DID land (unseen: no history on this node) → op account present → no new attempt', async function () {
    const net = faults(this, 'a delayed send, failing status reads and a slot warp');
    const { row, recipient } = await newPayout();
    // The send executes but its answer comes late; meanwhile the status lookups start failing, until the blockhash
    // has expired and the signature has left the node's status cache: then only the op account can tell.
    net.faults.dropNextResponses({ method: 'sendTransaction', mode: 'delay', delayMs: 3000 });
    const run = runPayout(row, deps({ chain: chain({ searchTransactionHistory: false }) }));
    await until(async () => (await tokenBalance(connection, recipient)) === row.amount, 'the transfer to land');
    net.faults.failNext({ kind: '500', method: 'getSignatureStatuses', count: 1_000_000 });
    await until(async () => (await listAttempts(db.pool, row.id)).find((a) => a.status === 'sent'), 'attempt 1 sent');
    net.faults.expireBlockhashesNow();
    net.advanceSlots(400);
    net.faults.clear();
    const r = await run;
    expect(r!.state).to.equal('succeeded');
    const attempts = await listAttempts(db.pool, row.id);
    expect(attempts).to.have.length(1);
    expect(attempts[0].status).to.equal('landed');
    // Named from the op account's history: the attempt in our journal.
    expect(r!.signature).to.equal(attempts[0].signature);
    await expectExactlyOneTransfer(row, recipient);
  });

  for (const fp of ['payout.after_persist_before_send', 'payout.after_send_before_record']) {
    it(`crash (SIGKILL) at ${fp} → \`oncepay payout resume\` finishes with exactly one transfer`, async () => {
      const { row, recipient } = await newPayout();
      const env = { ...db.env, ONCEPAY_FAILPOINT: fp };
      const crashed = await oncepay(
        [
          ...['payout', 'execute', row.id, '--rpc', net.url, '--authority', authorityFile, '--poll-ms', '20'],
          ...cliExecutor,
          '--json',
        ],
        { env },
      );
      expect(crashed.signal, crashed.stderr).to.equal('SIGKILL');
      expect(crashed.stderr).to.contain(fp);
      const journal = await listAttempts(db.pool, row.id);
      expect(journal).to.have.length(1);
      expect(journal[0].status).to.equal('built'); // persisted; the send (if any) was never recorded
      expect((await getPayout(db.pool, row.id))!.state).to.equal('executing');

      const resumed = await oncepay(
        [
          ...['payout', 'resume', '--rpc', net.url, '--authority', authorityFile, '--poll-ms', '20'],
          ...cliExecutor,
          '--json',
        ],
        { env: db.env },
      );
      expect(resumed.code, resumed.stderr).to.equal(0);
      const out = JSON.parse(resumed.stdout) as { results: Array<{ id: string; state: string; signature: string }> };
      const mine = out.results.find((x) => x.id === row.id)!;
      expect(mine.state).to.equal('succeeded');
      // Exactly one attempt landed. The crashed attempt either finished (same bytes, nothing re-signed) or, if it
      // never reached the chain and its blockhash expired meanwhile, was proven expired before a new one was signed.
      const after = await listAttempts(db.pool, row.id);
      expect(after[0].signature).to.equal(journal[0].signature);
      expect(after.filter((a) => a.status === 'landed')).to.have.length(1);
      if (fp === 'payout.after_send_before_record') {
        expect(after.map((a) => a.status)).to.deep.equal(['landed']); // it was sent: it landed, never re-signed
      } else {
        expect(JSON.stringify(after.map((a) => a.status))).to.be.oneOf(['["landed"]', '["expired","landed"]']);
      }
      expect(mine.signature).to.equal(after.find((a) => a.status === 'landed')!.signature);
      await expectExactlyOneTransfer(row, recipient);
    });
  }

  it('two worker processes executing the same row at once → one transfer, both report the same result', async () => {
    const { row, recipient } = await newPayout();
    const args = [
      'payout',
      'execute',
      row.id,
      '--rpc',
      net.url,
      '--authority',
      authorityFile,
      '--poll-ms',
      '20',
      ...cliExecutor,
      '--json',
    ];
    const [a, b] = await Promise.all([oncepay(args, { env: db.env }), oncepay(args, { env: db.env })]);
    expect(a.code, a.stderr).to.equal(0);
    expect(b.code, b.stderr).to.equal(0);
    const ra = JSON.parse(a.stdout);
    const rb = JSON.parse(b.stdout);
    expect(ra.state).to.equal('succeeded');
    expect(rb).to.deep.equal(ra);
    expect(await listAttempts(db.pool, row.id)).to.have.length(1);
    await expectExactlyOneTransfer(row, recipient);
  });

  it('`oncepay payout serve --rpc --authority`: POST /v1/payouts is executed once; replays change nothing; GET shows the proof', async () => {
    const recipient = await createTokenAccount(
      connectionIo(connection),
      m.authority,
      m.mint,
      Keypair.generate().publicKey,
    );
    const child = spawn(
      process.execPath,
      [
        path.join(ROOT, 'bin', 'oncepay'),
        'payout',
        'serve',
        '--port',
        '0',
        '--rpc',
        net.url,
        '--authority',
        authorityFile,
        '--poll-ms',
        '20',
        ...cliExecutor,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, ONCEPAY_FROM_SOURCE: '1', NODE_ENV: 'test', ...db.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      const base = await until(async () => (/\{"url":"([^"]+)"/.exec(out) ?? [])[1], 'serve to listen', 60_000);
      const headers = {
        authorization: `Bearer ${L.apiKey}`,
        'idempotency-key': 'serve-1',
        'content-type': 'application/json',
      };
      const body = JSON.stringify({
        payoutId: `lp-serve-${++seq}`,
        recipient: recipient.toBase58(),
        mint: m.mint.toBase58(),
        amount: '4242',
      });
      const created = await fetch(`${base}/v1/payouts`, { method: 'POST', headers, body });
      expect(created.status).to.equal(201);
      const { id } = (await created.json()) as { id: string };
      const replay = await fetch(`${base}/v1/payouts`, { method: 'POST', headers, body });
      expect(replay.status).to.equal(201);
      expect(((await replay.json()) as { id: string }).id).to.equal(id);
      const done = await until(async () => {
        const g = (await (
          await fetch(`${base}/v1/payouts/${id}`, { headers: { authorization: headers.authorization } })
        ).json()) as { state: string; proof: { signature: string } | null };
        return g.state === 'succeeded' ? g : undefined;
      }, 'the payout to succeed');
      const row = (await getPayout(db.pool, id))!;
      expect(done.proof!.signature).to.equal(row.resultSignature);
      await expectExactlyOneTransfer(row, recipient);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).to.equal(0); // drained and exited cleanly on SIGTERM
    }
  });

  it('two in-process workers with their own pools on the same row → one transfer, same result', async () => {
    const { row, recipient } = await newPayout();
    const pools: Pool[] = [
      createPool({ url: db.url, schema: db.schema }),
      createPool({ url: db.url, schema: db.schema }),
    ];
    try {
      const [ra, rb] = await Promise.all(pools.map((p) => runPayout(row, deps({ db: p }))));
      expect(ra).to.deep.equal(rb);
      expect(ra!.state).to.equal('succeeded');
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
    await expectExactlyOneTransfer(row, recipient);
  });

  it('a different payout row for the same recipient and amount is a second, legitimate transfer', async () => {
    const { row, recipient } = await newPayout('500');
    const r1 = await runPayout(row, deps());
    const { row: row2 } = await createPayout(db.pool, merchant, {
      payoutId: `lp-${++seq}`,
      recipient: recipient.toBase58(),
      mint: m.mint.toBase58(),
      amount: '500',
    });
    const r2 = await runPayout(row2, deps());
    expect([r1!.state, r2!.state]).to.deep.equal(['succeeded', 'succeeded']);
    expect(r2!.opPda).to.not.equal(r1!.opPda);
    expect(await tokenBalance(connection, recipient)).to.equal(1000n);
  });

  it('a payout the program refuses (merchant paused) → `oncepay payout execute` exits 4 and stores "MerchantPaused (6002)"; unpaused, `payout retry` → paid once', async () => {
    const { row, recipient } = await newPayout();
    const io = connectionIo(connection);
    await io.send([setPausedInstruction(m.programId, m.authority.publicKey, true)], [m.authority]);
    try {
      const refused = await oncepay(
        [
          ...['payout', 'execute', row.id, '--rpc', net.url, '--authority', authorityFile, '--poll-ms', '20'],
          ...cliExecutor,
          '--json',
        ],
        { env: db.env },
      );
      expect(refused.code, refused.stderr).to.equal(4);
      // The name and number as the IDL's error table has them, in the answer and in the journal.
      expect(JSON.parse(refused.stdout)).to.deep.include({
        id: row.id,
        state: 'failed',
        error: 'MerchantPaused (6002)',
      });
      const failed = (await getPayout(db.pool, row.id))!;
      expect([failed.state, failed.lastError]).to.deep.equal(['failed', 'MerchantPaused (6002)']);
      expect((await listAttempts(db.pool, row.id)).map((a) => [a.status, a.error])).to.deep.equal([
        ['failed', 'MerchantPaused (6002)'],
      ]);
    } finally {
      await io.send([setPausedInstruction(m.programId, m.authority.publicKey, false)], [m.authority]);
    }
    const retried = await oncepay(['payout', 'retry', row.id, '--merchant', merchant.id, '--json'], { env: db.env });
    expect(retried.code, retried.stderr).to.equal(0);
    expect(JSON.parse(retried.stdout)).to.deep.include({ reopened: [row.id] });
    const r = await runPayout((await getPayout(db.pool, row.id))!, deps());
    expect(r!.state).to.equal('succeeded');
    await expectExactlyOneTransfer(row, recipient);
  });

  it('a refused attempt another writer settled first: the run reads the journal again and fails the payout once, no TypeError', async () => {
    const { row, recipient } = await newPayout();
    const io = connectionIo(connection);
    await io.send([setPausedInstruction(m.programId, m.authority.publicKey, true)], [m.authority]);
    try {
      // The first time the node reports the attempt refused, another writer settles that attempt before this run
      // does, so the run's own settling write finds the row changed.
      let interfered = false;
      const settledFirst = (c: PayoutChain): PayoutChain => ({
        ...c,
        async signatureStatuses(sigs) {
          const statuses = await c.signatureStatuses(sigs);
          const refused = statuses.findIndex((s) => s.found && s.settled && s.err !== null);
          if (!interfered && refused >= 0) {
            interfered = true;
            await db.pool.query(
              `UPDATE payout_attempts SET status = 'failed', error = 'settled by another writer', updated_at = now()
                WHERE signature = $1 AND status IN ('built', 'sent')`,
              [sigs[refused]],
            );
          }
          return statuses;
        },
      });
      const r = await runPayout(row, deps({ chain: settledFirst(chain()) }));
      expect(interfered).to.equal(true);
      expect([r!.state, r!.error]).to.deep.equal(['failed', 'MerchantPaused (6002)']);
      const attempts = await listAttempts(db.pool, row.id);
      expect(attempts.every((a) => a.status === 'failed')).to.equal(true);
      const failed = (await getPayout(db.pool, row.id))!;
      expect([failed.state, failed.lastError]).to.deep.equal(['failed', 'MerchantPaused (6002)']);
      expect(await tokenBalance(connection, recipient)).to.equal(0n);
    } finally {
      await io.send([setPausedInstruction(m.programId, m.authority.publicKey, false)], [m.authority]);
    }
  });

  it('two journals racing on the same op: the loser gets 6000 on chain and names the same winning signature', async () => {
    const { row, recipient } = await newPayout();
    const other = await createTestDb(`app_localnet_b_${executor}`);
    try {
      const mb = await insertMerchant(other.pool, {
        name: 'm',
        apiKeyHash: hashApiKey('localnet-key-b-0000000'),
        programId: address(m.programId),
        merchantAddress: address(m.merchant),
        vault: address(m.vault),
      });
      const { row: twin } = await createPayout(other.pool, mb, {
        payoutId: row.merchantPayoutId,
        recipient: row.recipientToken,
        mint: row.mint,
        amount: row.amount,
      });
      expect(twin.opPda).to.equal(row.opPda);
      const payerB = Keypair.generate();
      const sig = await connection.requestAirdrop(payerB.publicKey, 1_000_000_000);
      await until(async () => (await connection.getSignatureStatuses([sig])).value[0]?.confirmationStatus, 'airdrop');
      // Two journals that share no database (no common lock): both see no op account and sign; their first sends
      // are held until both are ready, then go to the node together. The program decides.
      const held: Array<() => void> = [];
      let released = false;
      const raced = (c: PayoutChain): PayoutChain => ({
        ...c,
        async sendRawTransaction(bytes) {
          if (!released) {
            await new Promise<void>((go) => {
              held.push(go);
              if (held.length === 2) {
                released = true;
                held.forEach((f) => f());
              }
            });
          }
          return c.sendRawTransaction(bytes);
        },
      });
      const [ra, rb] = await Promise.all([
        runPayout(row, deps({ chain: raced(chain()) })),
        runPayout(twin, deps({ db: other.pool, payer: payerB, chain: raced(chain()) })),
      ]);
      expect(ra!.state).to.equal('succeeded');
      expect(rb!.state).to.equal('succeeded');
      expect(rb!.signature).to.equal(ra!.signature);
      expect(rb!.slot).to.equal(ra!.slot);
      const all = [...(await listAttempts(db.pool, row.id)), ...(await listAttempts(other.pool, twin.id))];
      expect(all.map((a) => a.status).sort()).to.deep.equal(['failed', 'landed']);
      expect(all.find((a) => a.status === 'failed')!.error).to.equal('OperationAlreadyConsumed');
      expect(all.find((a) => a.status === 'landed')!.signature).to.equal(ra!.signature);
      await expectExactlyOneTransfer(row, recipient);
    } finally {
      await other.drop();
    }
  });
}
