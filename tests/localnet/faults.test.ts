// Fault injection: each fault surfaces the way web3.js reports it against a real provider, and the chain state
// behind it is what a real cluster would have (executed or not).
import { expect } from 'chai';
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bs58 from 'bs58';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  SolanaJSONRPCError,
  SystemProgram,
  Transaction,
  TransactionExpiredBlockheightExceededError,
} from '@solana/web3.js';
import { LocalnetHandle, startLocalnet } from '../../localnet';
import { connect, funded, rpc, until } from './support';
import { isOncepayError } from '../../common/errors';

async function signedTransfer(
  conn: Connection,
  from: Keypair,
  lamports: number,
): Promise<{ tx: Transaction; to: Keypair; blockhash: string; lastValidBlockHeight: number }> {
  const to = Keypair.generate();
  const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
  const tx = new Transaction({ feePayer: from.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports }),
  );
  tx.sign(from);
  return { tx, to, blockhash, lastValidBlockHeight };
}

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe('localnet: fault injection', function () {
  let net: LocalnetHandle;
  let conn: Connection;
  let payer: Keypair;

  before(async () => {
    net = await startLocalnet({ slotMs: 20, finalityDepth: 2, wsOnNextPort: false });
    conn = connect(net);
    payer = await funded(conn, 100);
  });
  after(async () => {
    await net.stop();
  });

  it('a dropped sendTransaction response still lands the transaction (findable by getSignatureStatuses)', async () => {
    const { tx, to } = await signedTransfer(conn, payer, LAMPORTS_PER_SOL);
    net.faults.dropNextResponses({ method: 'sendTransaction', count: 1 });
    const err = await caught(conn.sendRawTransaction(tx.serialize()));
    expect(err.message).to.match(/socket hang up|ECONNRESET|fetch failed/);
    const sig = bs58.encode(tx.signature!);
    const st = await until('status after drop', async () => {
      const v = (await conn.getSignatureStatuses([sig])).value[0];
      return v && v.confirmationStatus !== 'processed' ? v : null;
    });
    expect(st.err).to.equal(null);
    expect(await conn.getBalance(to.publicKey)).to.equal(LAMPORTS_PER_SOL);
    // Rebroadcasting the same bytes is harmless: same signature, one execution.
    expect(await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true })).to.equal(sig);
    await new Promise((r) => setTimeout(r, 60));
    expect(await conn.getBalance(to.publicKey)).to.equal(LAMPORTS_PER_SOL);
  });

  it('a delayed response arrives late but intact', async () => {
    net.faults.dropNextResponses({ method: 'getHealth', mode: 'delay', delayMs: 150 });
    expect((await rpc(net.url, 'getHealth')).result).to.equal('ok');
  });

  it('429 and 500 surface as the errors web3.js raises for them; nothing executes', async () => {
    const { tx, to } = await signedTransfer(conn, payer, LAMPORTS_PER_SOL);
    net.faults.failNext({ kind: '429', method: 'sendTransaction' });
    const e429 = await caught(conn.sendRawTransaction(tx.serialize()));
    expect(e429.message).to.match(/^429 Too Many Requests: /);
    net.faults.failNext({ kind: '500', method: 'getBalance' });
    const e500 = await caught(conn.getBalance(to.publicKey));
    expect(e500.message).to.include('500 Internal Server Error');
    net.advanceSlots(2);
    expect(
      (await conn.getSignatureStatuses([bs58.encode(tx.signature!)], { searchTransactionHistory: true })).value[0],
    ).to.equal(null);
    expect(await conn.getBalance(to.publicKey)).to.equal(0);
  });

  it('a timeout hangs without executing, then the connection dies', async () => {
    const { tx, to } = await signedTransfer(conn, payer, LAMPORTS_PER_SOL);
    net.faults.failNext({ kind: 'timeout', method: 'sendTransaction', delayMs: 100 });
    const err = await caught(conn.sendRawTransaction(tx.serialize()));
    expect(err.message).to.match(/socket hang up|ECONNRESET|fetch failed/);
    expect(
      (await conn.getSignatureStatuses([bs58.encode(tx.signature!)], { searchTransactionHistory: true })).value[0],
    ).to.equal(null);
    expect(await conn.getBalance(to.publicKey)).to.equal(0);
  });

  it('the admin endpoint arms the same faults over HTTP', async () => {
    const res = await fetch(`${net.url}/admin/fail-next`, {
      method: 'POST',
      body: JSON.stringify({ kind: '500', method: 'getSlot' }),
    });
    expect(res.status).to.equal(200);
    const e = await caught(conn.getSlot());
    expect(e.message).to.include('500');
    expect(await conn.getSlot()).to.be.a('number');
  });
});

describe('localnet: skipped slots and blockhash expiry (manual slots)', function () {
  let net: LocalnetHandle;
  let conn: Connection;
  let payer: Keypair;

  before(async () => {
    net = await startLocalnet({ slotMs: 0, finalityDepth: 2, wsOnNextPort: false });
    conn = connect(net);
    const kp = Keypair.generate();
    const sig = await conn.requestAirdrop(kp.publicKey, 100 * LAMPORTS_PER_SOL);
    net.advanceSlots(1);
    expect((await conn.getSignatureStatus(sig)).value!.confirmationStatus).to.equal('confirmed');
    payer = kp;
  });
  after(async () => {
    await net.stop();
  });

  it('a skipped slot has no block: getBlock -32007, getBlocks leaves it out, its transactions land in the next block', async () => {
    const next = net.chain.pendingSlot();
    net.faults.skipSlot(next);
    const { tx } = await signedTransfer(conn, payer, LAMPORTS_PER_SOL);
    const sig = await conn.sendRawTransaction(tx.serialize());
    net.advanceSlots(2);
    const err = await caught(conn.getBlock(next, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }));
    expect(err).to.be.instanceOf(SolanaJSONRPCError);
    expect((err as SolanaJSONRPCError).code).to.equal(-32007);
    expect(await conn.getBlocks(next - 1, next + 1, 'confirmed')).to.deep.equal([next - 1, next + 1]);
    const landed = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(landed!.slot).to.equal(next + 1);
    const block = await conn.getBlock(next + 1, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(block!.parentSlot).to.equal(next - 1);
  });

  it('expired blockhash: invalid, rejected with BlockhashNotFound, and confirmTransaction gives up by block height', async () => {
    const { tx, to, blockhash, lastValidBlockHeight } = await signedTransfer(conn, payer, LAMPORTS_PER_SOL);
    expect((await conn.isBlockhashValid(blockhash)).value).to.equal(true);
    net.faults.expireBlockhashesNow();
    expect((await conn.isBlockhashValid(blockhash)).value).to.equal(false);
    expect(await conn.getBlockHeight()).to.be.greaterThan(lastValidBlockHeight);
    // At confirmed, where the blockhash was known until it expired (finalized would refuse it for being new).
    const raw = await rpc<string, { err: unknown }>(net.url, 'sendTransaction', [
      tx.serialize().toString('base64'),
      { encoding: 'base64', preflightCommitment: 'confirmed' },
    ]);
    expect(raw.error!.code).to.equal(-32002);
    expect(raw.error!.data!.err).to.equal('BlockhashNotFound');
    expect(raw.error!.message).to.equal('Transaction simulation failed: Blockhash not found');
    // skipPreflight: the node answers with the signature and drops it, as a real one does.
    const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    const err = await caught(conn.confirmTransaction({ signature: sig, blockhash, lastValidBlockHeight }, 'confirmed'));
    expect(err).to.be.instanceOf(TransactionExpiredBlockheightExceededError);
    net.advanceSlots(1);
    expect((await conn.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0]).to.equal(null);
    expect(await conn.getBalance(to.publicKey)).to.equal(0);
  });

  it('forgetHistory: the next status request is answered from the status cache alone, as by a node without the history', async () => {
    const { tx } = await signedTransfer(conn, payer, LAMPORTS_PER_SOL);
    const sig = await conn.sendRawTransaction(tx.serialize());
    net.advanceSlots(302); // out of the status cache (its block 301 slots below the tip)
    const status = async () =>
      (await conn.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0]?.slot ?? null;
    const landed = await status();
    expect(landed).to.be.a('number');
    net.faults.forgetHistory({ count: 1 });
    expect(await status()).to.equal(null);
    expect(await status()).to.equal(landed);
    // Within the cache, it is answered either way; over HTTP, the same fault.
    const { tx: recent } = await signedTransfer(conn, payer, LAMPORTS_PER_SOL);
    const fresh = await conn.sendRawTransaction(recent.serialize());
    net.advanceSlots(1);
    await fetch(`${net.url}/admin/forget-history`, { method: 'POST', body: JSON.stringify({ count: 1 }) });
    const both = (await conn.getSignatureStatuses([sig, fresh], { searchTransactionHistory: true })).value;
    expect(both[0]).to.equal(null);
    expect(both[1]!.confirmationStatus).to.equal('confirmed');
  });

  it('forgetHistory unseen: the next status request is answered by a node behind the cluster, without even the cache', async () => {
    const { tx } = await signedTransfer(conn, payer, LAMPORTS_PER_SOL);
    const sig = await conn.sendRawTransaction(tx.serialize());
    net.advanceSlots(1);
    const status = async () => (await conn.getSignatureStatuses([sig])).value[0]?.confirmationStatus ?? null;
    expect(await status()).to.equal('confirmed');
    net.faults.forgetHistory({ count: 1, unseen: true });
    expect(await status()).to.equal(null);
    expect(await status()).to.equal('confirmed');
    await fetch(`${net.url}/admin/forget-history`, {
      method: 'POST',
      body: JSON.stringify({ count: 1, unseen: true }),
    });
    expect(await status()).to.equal(null);
    expect(await status()).to.equal('confirmed');
  });
});

describe('localnet: restart and persistence', function () {
  it('restart keeping the ledger finds earlier signatures and balances; restart with wipe forgets them', async () => {
    const net = await startLocalnet({ slotMs: 0, finalityDepth: 1, wsOnNextPort: false });
    try {
      let conn = connect(net);
      const kp = Keypair.generate();
      const sig = await conn.requestAirdrop(kp.publicKey, 3 * LAMPORTS_PER_SOL);
      net.advanceSlots(3);
      const slot = (await conn.getSignatureStatus(sig)).value!.slot;
      const genesis = await conn.getGenesisHash();
      const url = net.url;

      await net.restart({ keepLedger: true });
      expect(net.url).to.equal(url);
      // A restart closes kept-alive sockets, as a real node's would: a client reconnects.
      conn = connect(net);
      const st = (await conn.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0];
      expect(st!.slot).to.equal(slot);
      expect(st!.confirmationStatus).to.equal('finalized');
      expect(await conn.getBalance(kp.publicKey)).to.equal(3 * LAMPORTS_PER_SOL);
      expect(await conn.getGenesisHash()).to.equal(genesis);
      expect((await conn.getTransaction(sig, { commitment: 'confirmed' }))!.slot).to.equal(slot);
      // The chain goes on from where it was.
      expect(await conn.getSlot('confirmed')).to.be.at.least(slot);
      // A resend after restart must not execute twice.
      const again = await rpc<string>(net.url, 'requestAirdrop', [kp.publicKey.toBase58(), LAMPORTS_PER_SOL]);
      expect(again.result).to.be.a('string');
      net.advanceSlots(1);
      // New transactions after a restore are recorded as before.
      expect((await conn.getSignatureStatus(again.result!)).value!.confirmationStatus).to.equal('confirmed');
      expect(await conn.getBalance(kp.publicKey)).to.equal(4 * LAMPORTS_PER_SOL);

      await net.restart({ keepLedger: false });
      conn = connect(net);
      expect((await conn.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0]).to.equal(null);
      expect(await conn.getBalance(kp.publicKey)).to.equal(0);
      expect(await conn.getGenesisHash()).to.not.equal(genesis);
      expect(await conn.getSlot('confirmed')).to.equal(0);
    } finally {
      await net.stop();
    }
  });

  it('refuses a ledger it cannot read (no silent fresh start); --reset wipes it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-localnet-corrupt-'));
    try {
      const first = await startLocalnet({ slotMs: 0, ledgerDir: dir, wsOnNextPort: false });
      first.advanceSlots(2);
      await first.stop();
      fs.rmSync(path.join(dir, 'state.bin'));
      let err: unknown;
      try {
        await startLocalnet({ slotMs: 0, ledgerDir: dir, wsOnNextPort: false });
      } catch (e) {
        err = e;
      }
      expect(isOncepayError(err, 'ONCEPAY__LOCALNET__LEDGER_CORRUPT')).to.equal(true);
      const fresh = await startLocalnet({ slotMs: 0, ledgerDir: dir, reset: true, wsOnNextPort: false });
      expect(fresh.chain.tipSlot()).to.equal(0);
      await fresh.stop();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // `oncepay localnet` as a real process on a ledger folder. Every child and folder is also cleaned up in
  // afterEach, which runs even when a test times out while awaiting one of them.
  const root = path.resolve(__dirname, '../..');
  const spawned: ChildProcess[] = [];
  const folders: string[] = [];
  afterEach(() => {
    for (const c of spawned.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of folders.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const launch = (
    dir: string,
    env: Record<string, string> = {},
  ): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> =>
    new Promise((resolve, reject) => {
      folders.push(dir);
      const child = spawn(
        process.execPath,
        [
          path.join(root, 'bin/oncepay'),
          'localnet',
          '--port',
          '0',
          '--slot-ms',
          '20',
          '--finality-depth',
          '2',
          '--ledger',
          dir,
        ],
        {
          // From source: a dist/ left by an earlier build may be stale while tests run against the sources.
          env: { ...process.env, ONCEPAY_FROM_SOURCE: '1', ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      spawned.push(child);
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      let out = '';
      child.stderr!.resume();
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n'))
          resolve({ child, url: (JSON.parse(out.split('\n')[0]) as { rpc: string }).rpc, exited });
      });
      void exited.then((code) => reject(new Error(`localnet exited before printing its URL (${code})`)));
    });

  it('kill -9 of `oncepay localnet` keeps every confirmed transaction; the restarted process finds it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-localnet-crash-'));
    const children: ChildProcess[] = [];
    try {
      const first = await launch(dir);
      children.push(first.child);
      const conn = new Connection(first.url, { commitment: 'confirmed', disableRetryOnRateLimit: true });
      const kp = Keypair.generate();
      const sig = await conn.requestAirdrop(kp.publicKey, 2 * LAMPORTS_PER_SOL);
      await until(
        'confirmed airdrop',
        async () => (await conn.getSignatureStatus(sig)).value?.confirmationStatus === 'confirmed',
      );
      first.child.kill('SIGKILL');
      await first.exited;

      const second = await launch(dir);
      children.push(second.child);
      const conn2 = new Connection(second.url, { commitment: 'confirmed', disableRetryOnRateLimit: true });
      const st = (await conn2.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0];
      expect(st).to.not.equal(null);
      expect(st!.err).to.equal(null);
      expect(await conn2.getBalance(kp.publicKey)).to.equal(2 * LAMPORTS_PER_SOL);
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    } finally {
      for (const c of children) c.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SIGKILL between the state snapshot and the block append: the block is repaired from state.bin on restart', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-localnet-crash-'));
    const children: ChildProcess[] = [];
    try {
      const first = await launch(dir, { ONCEPAY_FAILPOINT: 'localnet.after_snapshot_before_append' });
      children.push(first.child);
      const kp = Keypair.generate();
      const sig = (await rpc(first.url, 'requestAirdrop', [kp.publicKey.toBase58(), 2 * LAMPORTS_PER_SOL]))
        .result as string;
      // The next seal writes state.bin for the airdrop's block and dies before blocks.jsonl gets it.
      expect(await first.exited).to.equal(null);
      expect(fs.readFileSync(path.join(dir, 'blocks.jsonl'), 'utf8')).to.not.include(sig);

      const second = await launch(dir);
      children.push(second.child);
      const conn = new Connection(second.url, { commitment: 'confirmed', disableRetryOnRateLimit: true });
      const st = (await conn.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0];
      expect(st!.err).to.equal(null);
      expect(await conn.getBalance(kp.publicKey)).to.equal(2 * LAMPORTS_PER_SOL);
      expect(fs.readFileSync(path.join(dir, 'blocks.jsonl'), 'utf8')).to.include(sig);
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    } finally {
      for (const c of children) c.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SIGKILL right after execution, before the slot is sealed: after restart neither the effect nor the record exists', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-localnet-crash-'));
    const children: ChildProcess[] = [];
    try {
      const first = await launch(dir, { ONCEPAY_FAILPOINT: 'localnet.after_execute_before_seal' });
      children.push(first.child);
      const kp = Keypair.generate();
      const answer = await fetch(first.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'requestAirdrop',
          params: [kp.publicKey.toBase58(), LAMPORTS_PER_SOL],
        }),
      }).then(
        () => 'answered',
        () => 'connection lost',
      );
      expect(answer).to.equal('connection lost');
      expect(await first.exited).to.equal(null);

      const second = await launch(dir);
      children.push(second.child);
      const conn = new Connection(second.url, { commitment: 'confirmed', disableRetryOnRateLimit: true });
      expect(await conn.getBalance(kp.publicKey, 'processed')).to.equal(0);
      expect((await conn.getSignaturesForAddress(kp.publicKey)).length).to.equal(0);
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    } finally {
      for (const c of children) c.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
