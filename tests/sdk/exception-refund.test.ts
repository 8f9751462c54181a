// Exceptions settled exactly once, on the localnet with the compiled program: real customer transfers overpay and
// late-pay an invoice whose deposit address is the merchant's vault, the indexer's ledger records them as
// exceptions, and `oncepay exception refund` pays each back once — even when two commands race, and when the
// first is SIGKILLed after sending and before recording. `resolve` closes one without moving money; `report`
// shows the states and sums.
import { expect } from 'chai';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { createMintToInstruction, createTransferCheckedInstruction } from '@solana/spl-token';
import { TestNode } from '../../testkit/node';
import { createLedger } from '../../indexer/ledger';
import { decodeInput, ingestReceipts } from '../../indexer/source/file';
import { createTokenAccount, send, tokenBalance } from '../../testkit/cluster';
import { OncePay, refundPayoutId } from '../../sdk';
import { createTestDb, TestDb } from '../../testkit/test-db';
import { rpc } from '../localnet/support';
import { Keys, cli, createMint, errorCode, fundedKeypair, startNet } from './helpers';

/** What `exception refund|resolve --json` prints: the fields these tests read. */
type ExceptionOut = {
  created: boolean;
  changed: boolean;
  exception: { state: string; refund: { id: string; opPda: string; proof: { signature: string } } };
};

describe('sdk: exceptions refunded or resolved exactly once (oncepay exception …)', function () {
  this.timeout(300_000); // each `oncepay` child compiles the CLI from source: seconds of CPU on a shared machine
  let net: TestNode;
  let connection: Connection;
  let db: TestDb;
  let op: OncePay;
  const keys = new Keys();
  let authority: Keypair;
  let authorityFile: string;
  let mint: PublicKey;
  let vault: PublicKey;
  let customer: Keypair;
  let customerAccount: PublicKey;
  let invoiceSeq = 0;

  /** A real transfer from the customer to the vault, ingested by the ledger like the scanner would. */
  async function pay(amount: bigint): Promise<string> {
    const { signature } = await send(
      connection,
      [createTransferCheckedInstruction(customerAccount, mint, vault, customer.publicKey, amount, 6)],
      [customer],
    );
    const tx = await rpc(net.url, 'getTransaction', [
      signature,
      { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 },
    ]);
    const decoded = decodeInput(JSON.stringify(tx.result), { cluster: 'localnet' });
    expect(decoded.problems).to.deep.equal([]);
    await ingestReceipts(createLedger({ db: db.pool }), decoded, {
      cluster: 'localnet',
      source: 'scanner',
      batchSize: 100,
    });
    return signature;
  }

  /** An invoice of `expected` at the vault, paid with `paid` (> expected: an overpayment of the difference). */
  async function invoice(expected: bigint): Promise<string> {
    const id = `INV-${++invoiceSeq}`;
    await createLedger({ db: db.pool }).createInvoice({
      id,
      mint: mint.toBase58(),
      expectedAmount: expected,
      depositAddress: vault.toBase58(),
    });
    return id;
  }

  async function exceptionOf(signature: string): Promise<string> {
    const all = await op.listExceptions();
    return all.find((e) => e.receipt.signature === signature)!.id;
  }

  async function successfulOpTransactions(opPda: string): Promise<number> {
    const sigs = await connection.getSignaturesForAddress(new PublicKey(opPda), { limit: 100 }, 'confirmed');
    return sigs.filter((s) => s.err === null).length;
  }

  before(async () => {
    ({ net, connection } = await startNet());
    db = await createTestDb('sdk_exceptions');
    op = OncePay.connect({ databaseUrl: db.url, schema: db.schema, rpcUrl: net.url, pollIntervalMs: 20 });
    authority = await fundedKeypair(connection);
    authorityFile = keys.file(authority, 'authority');
    const { merchant } = await op.initMerchant({ authority, payoutAuthority: authority.publicKey });
    mint = await createMint(connection, authority);
    vault = new PublicKey((await op.createVault({ payer: authority, merchant, mint })).vault);
    await op.registerMerchant({ name: 'shop', merchant, vault });
    customer = await fundedKeypair(connection);
    customerAccount = await createTokenAccount(connection, authority, mint, customer.publicKey);
    await send(
      connection,
      [createMintToInstruction(mint, customerAccount, authority.publicKey, 1_000_000n)],
      [authority],
    );
  });
  after(async () => {
    await op?.close();
    await db?.drop();
    await net?.stop();
    keys.remove();
  });

  it('an overpayment → two `exception refund` at once → one refund payout, one on-chain payment of the excess back to the sender', async () => {
    await invoice(1000n);
    const sig = await pay(1500n);
    const [e] = await op.listExceptions({ kind: 'overpayment', invoiceId: `INV-${invoiceSeq}` });
    expect(e).to.deep.include({ kind: 'overpayment', amount: 500n, state: 'open', refund: null });
    expect(e.receipt).to.deep.include({
      cluster: 'localnet',
      signature: sig,
      source: customerAccount.toBase58(),
      destination: vault.toBase58(),
    });
    const before = {
      customer: await tokenBalance(connection, customerAccount),
      vault: await tokenBalance(connection, vault),
    };

    const args = [
      'exception',
      'refund',
      e.id,
      '--authority',
      authorityFile,
      '--rpc',
      net.url,
      '--poll-ms',
      '20',
      '--json',
    ];
    const [a, b] = await Promise.all([cli<ExceptionOut>(args, db.env), cli<ExceptionOut>(args, db.env)]);
    for (const r of [a, b]) {
      expect(r.code, r.stderr).to.equal(0);
      expect(r.json.exception.state).to.equal('refunded');
    }
    expect([a.json.created, b.json.created].sort()).to.deep.equal([false, true]);
    expect(a.json.exception.refund).to.deep.equal(b.json.exception.refund);
    const refund = a.json.exception.refund;
    expect(refund).to.deep.include({
      payoutId: refundPayoutId(e.receipt),
      state: 'succeeded',
      recipient: customerAccount.toBase58(),
      amount: '500',
    });
    expect(refund.proof.signature).to.be.a('string');

    const rows = await db.pool.query(
      `SELECT id FROM payouts WHERE merchant_payout_id LIKE 'refund:%' AND merchant_payout_id = $1`,
      [refundPayoutId(e.receipt)],
    );
    expect(rows.rowCount).to.equal(1);
    expect(await successfulOpTransactions(refund.opPda)).to.equal(1);
    expect(await tokenBalance(connection, customerAccount)).to.equal(before.customer + 500n);
    expect(await tokenBalance(connection, vault)).to.equal(before.vault - 500n);

    // And again later: nothing new.
    const again = await op.refundException(e.id, { authority });
    expect(again.created).to.equal(false);
    expect(again.exception.refund!.proof!.signature).to.equal(refund.proof.signature);
    expect(await tokenBalance(connection, customerAccount)).to.equal(before.customer + 500n);
  });

  it('a late payment → refund SIGKILLed after sending, before recording → run again → paid once', async () => {
    const id = await invoice(100n);
    await pay(100n); // pays it
    const sig = await pay(700n); // late: the whole amount is the exception
    const exId = await exceptionOf(sig);
    const e = await op.getException(exId);
    expect(e).to.deep.include({ kind: 'late_payment', invoiceId: id, amount: 700n, state: 'open' });
    const before = await tokenBalance(connection, customerAccount);

    const args = [
      'exception',
      'refund',
      exId,
      '--authority',
      authorityFile,
      '--rpc',
      net.url,
      '--poll-ms',
      '20',
      '--json',
    ];
    const crashed = await cli(args, { ...db.env, ONCEPAY_FAILPOINT: 'payout.after_send_before_record' });
    expect(crashed.signal, crashed.stderr).to.equal('SIGKILL');
    const mid = await op.getException(exId);
    expect(mid.state).to.equal('refunding'); // linked, sent, not recorded

    const rerun = await cli<ExceptionOut>(args, db.env);
    expect(rerun.code, rerun.stderr).to.equal(0);
    expect(rerun.json.created).to.equal(false);
    expect(rerun.json.exception.state).to.equal('refunded');
    expect(await tokenBalance(connection, customerAccount)).to.equal(before + 700n);
    expect(await successfulOpTransactions(rerun.json.exception.refund.opPda)).to.equal(1);
    const attempts = await db.pool.query('SELECT status FROM payout_attempts WHERE payout_id = $1', [
      rerun.json.exception.refund.id,
    ]);
    expect(attempts.rows.filter((r) => r.status === 'landed')).to.have.length(1);
  });

  it('refund to an address the operator names; a second refund naming another address is refused', async () => {
    await invoice(10n);
    const sig = await pay(60n);
    const exId = await exceptionOf(sig);
    const elsewhere = await createTokenAccount(connection, authority, mint, Keypair.generate().publicKey);
    const r = await op.refundException(exId, { authority, to: elsewhere });
    expect(r.exception.state).to.equal('refunded');
    expect(await tokenBalance(connection, elsewhere)).to.equal(50n);
    const other = await createTokenAccount(connection, authority, mint, Keypair.generate().publicKey);
    const e = await op.refundException(exId, { authority, to: other }).then(
      () => null,
      (x: { code?: string }) => x,
    );
    expect(e?.code).to.equal('ONCEPAY__EXCEPTION__REFUND_TERMS_DIFFER');
    expect(await tokenBalance(connection, other)).to.equal(0n);
  });

  it('resolve closes one without moving money (idempotent); a resolved one is not refunded, a refunded one not resolved', async () => {
    await invoice(20n);
    const sig = await pay(33n);
    const exId = await exceptionOf(sig);
    const vaultBefore = await tokenBalance(connection, vault);
    const noNote = await op.resolveException(exId, '  ').then(
      () => null,
      (x: { code?: string }) => x,
    );
    expect(noNote?.code).to.equal('ONCEPAY__EXCEPTION__NOTE_MISSING');
    const r = await cli<ExceptionOut>(
      ['exception', 'resolve', exId, '--note', 'customer asked to keep it as credit', '--json'],
      db.env,
    );
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json).to.deep.include({ changed: true });
    expect(r.json.exception).to.deep.include({
      state: 'resolved',
      note: 'customer asked to keep it as credit',
      refund: null,
    });
    expect((await op.resolveException(exId, 'again')).changed).to.equal(false);
    const refused = await op.refundException(exId, { authority }).then(
      () => null,
      (x: { code?: string }) => x,
    );
    expect(refused?.code).to.equal('ONCEPAY__EXCEPTION__ALREADY_RESOLVED');
    expect(await tokenBalance(connection, vault)).to.equal(vaultBefore);

    const refunded = (await op.listExceptions({ state: 'refunded' }))[0];
    const no = await op.resolveException(refunded.id, 'x').then(
      () => null,
      (x: { code?: string }) => x,
    );
    expect(no?.code).to.equal('ONCEPAY__EXCEPTION__ALREADY_REFUNDED');
  });

  it('prepareRefund stores the refund without paying it; a worker pool (startWorker) pays it, once', async () => {
    await invoice(30n);
    const sig = await pay(45n);
    const exId = await exceptionOf(sig);
    const before = await tokenBalance(connection, customerAccount);
    const [p1, p2] = await Promise.all([op.prepareRefund(exId), op.prepareRefund(exId)]);
    expect(p1.payout.id).to.equal(p2.payout.id);
    expect([p1.created, p2.created].sort()).to.deep.equal([false, true]);
    expect(p1.payout).to.deep.include({ state: 'pending', amount: 15n, proof: null });
    expect((await op.getException(exId)).state).to.equal('refunding');

    const finished: string[] = [];
    const worker = op.startWorker({ authority, concurrency: 2, onFinished: (p) => finished.push(p.id) });
    try {
      for (let i = 0; (await op.getException(exId)).state !== 'refunded'; i++) {
        if (i > 3000) throw new Error('the worker did not pay the refund');
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await worker.stop({ graceMs: 5_000 });
    }
    const e = await op.getException(exId);
    expect(e.refund).to.deep.include({ id: p1.payout.id, state: 'succeeded', amount: 15n });
    expect(await tokenBalance(connection, customerAccount)).to.equal(before + 15n);
    expect(await successfulOpTransactions(e.refund!.opPda)).to.equal(1);
  });

  it('`exception list` filters; `report` shows open, refunded and resolved exceptions with their sums', async () => {
    await invoice(5n);
    await pay(9n); // one more overpayment, left open
    const list = await op.listExceptions({ kind: 'overpayment' });
    expect(list.map((e) => e.kind)).to.deep.equal([
      'overpayment',
      'overpayment',
      'overpayment',
      'overpayment',
      'overpayment',
    ]);
    expect(list.map((e) => e.state)).to.deep.equal(['refunded', 'refunded', 'resolved', 'refunded', 'open']);
    expect((await op.listExceptions({ kind: 'late_payment' })).map((e) => e.amount)).to.deep.equal([700n]);

    const [report, human, bad, missing] = await Promise.all([
      cli<{ exceptionStates: unknown }>(['report', '--json'], db.env),
      cli(['report'], db.env),
      cli(['exception', 'list', '--kind', 'nonsense'], db.env),
      cli(['exception', 'show', '999999'], db.env),
    ]);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('--kind must be one of');
    expect(errorCode(missing)).to.equal('ONCEPAY__EXCEPTION__NOT_FOUND');
    expect(human.stdout).to.contain(
      'exceptions by state: open 1 (4), refunding 0 (0), refunded 4 (1265), refund_failed 0 (0), resolved 1 (13)',
    );
    expect(report.code, report.stderr).to.equal(0);
    expect(report.json.exceptionStates).to.deep.equal({
      open: { count: 1, amount: '4' },
      refunding: { count: 0, amount: '0' },
      refunded: { count: 4, amount: String(500 + 700 + 50 + 15) },
      refund_failed: { count: 0, amount: '0' },
      resolved: { count: 1, amount: '13' },
    });
    expect(await op.exceptionTotals()).to.deep.include({ open: { count: 1, amount: 4n } });
  });
});
