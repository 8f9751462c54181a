// Two merchants share one installation: one database, one node (localnet with the compiled program), and each its own
// real processes — `oncepay payout serve` (API + worker pool) with its own payout authority — plus the exception
// commands. Each touches only its own rows: its worker claims and signs only its merchant's payouts (whichever API
// process stored them), its API key reads only its payouts, idempotency keys are per merchant, its exception commands
// see, refund and resolve only its exceptions; and when merchant B rotates its payout authority under B's running
// worker, the payout that worker signs with the old key is refused (Unauthorized), handed back — never failed — and
// paid once by the worker holding the new key.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { createMintToInstruction, createTransferCheckedInstruction } from '@solana/spl-token';
import { setPayoutAuthorityInstruction } from '../../app/merchant/instructions';
import { OncePay } from '../../sdk';
import { getPayout, listAttempts, PayoutRow } from '../../app/payout/store';
import { createLedger } from '../../indexer/ledger';
import { decodeInput, ingestReceipts } from '../../indexer/source/file';
import { createTokenAccount, send } from '../../testkit/cluster';
import { connectionIo } from '../../testkit/payout/setup';
import { requireLocalnet } from '../../testkit/node';
import { rpc } from '../localnet/support';
import { currentSuite, expectNoSecretShown, passwordOf, RPC_API_KEY, withApiKey } from '../faults/secrets';
import { Proc, startOncepay } from '../faults/support';
import { oncepay } from '../indexer/cli/run-cli';
import {
  expectExactlyOneTransfer,
  PayoutLocalnet,
  startPayoutLocalnet,
  TenantMerchant,
  until,
} from './payout/localnet-setup';

/** The fee payer of an attempt's transaction (its signer: no --payer is given). */
const signerOf = (txBytes: Buffer) => Transaction.from(txBytes).feePayer!.toBase58();

describe('tenancy: two merchants share one database, one node and their own processes (localnet)', function () {
  this.timeout(900_000);
  let L: PayoutLocalnet;
  let A: TenantMerchant;
  let B: TenantMerchant;
  const procs: Proc[] = [];
  let apiA: string;
  let apiB: string;

  /** A merchant's processes' environment: the database, and the RPC URL with a provider's key (never on argv). */
  const env = () => ({ ...L.db.env, ONCEPAY_RPC_URL: withApiKey(L.net.url), ONCEPAY_LOG_LEVEL: 'info' });
  function serve(m: TenantMerchant, extra: string[] = []): Proc {
    const p = startOncepay(
      [
        'payout',
        'serve',
        '--port',
        '0',
        '--authority',
        m.authorityFile,
        '--idle-ms',
        '50',
        '--poll-ms',
        '20',
        ...extra,
      ],
      env(),
    );
    procs.push(p);
    return p;
  }
  const logsOf = (p: Proc) =>
    p
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  before(async function () {
    L = await startPayoutLocalnet('tenancy');
    requireLocalnet(this, L.net, 'the rotation needs the node to confirm quickly');
    // Merchant A is L's own merchant, with its keypair file; B is a second one on the same node and database.
    A = { m: L.m, merchant: L.merchant, apiKey: L.apiKey, authorityFile: L.authorityFile, newPayout: L.newPayout };
    B = await L.addMerchant('b');
    const a = serve(A);
    // B's worker reads its merchants once: the rotation below happens under it (its refresh is an hour away).
    const b = serve(B, ['--merchants-refresh-ms', '3600000']);
    apiA = (await a.firstLine).url as string;
    apiB = (await b.firstLine).url as string;
    expect(apiA, a.stderr()).to.be.a('string');
    expect(apiB, b.stderr()).to.be.a('string');
  });
  after(async () => {
    for (const p of procs) if (p.alive()) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.done));
    await L?.stop();
  });

  async function post(api: string, m: TenantMerchant, key: string, body: Record<string, string>) {
    const r = await fetch(`${api}/v1/payouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.apiKey}`, 'idempotency-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Record<string, string> };
  }
  async function recipient(m: TenantMerchant): Promise<PublicKey> {
    return createTokenAccount(L.connection, m.m.authority, m.m.mint, Keypair.generate().publicKey);
  }
  const payoutBody = async (m: TenantMerchant, id: string) => ({
    payoutId: id,
    recipient: (await recipient(m)).toBase58(),
    mint: m.m.mint.toBase58(),
    amount: '1000',
  });
  const succeeded = async (ids: string[]) =>
    (await Promise.all(ids.map((id) => getPayout(L.db.pool, id)))).every((p) => p?.state === 'succeeded');
  const workerName = (p: Proc) => logsOf(p).find((l) => l.msg === 'payout worker started')?.worker as string;

  it("each merchant's worker pays its own payouts only, whichever API process stored them; each signed by its own key", async () => {
    const stored: Array<{ m: TenantMerchant; row: string; recipient: string }> = [];
    // A's payouts through A's API and through B's (an API process serves every merchant, by key), B's through B's.
    for (const [api, m, n] of [
      [apiA, A, 3],
      [apiB, A, 1],
      [apiB, B, 3],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const body = await payoutBody(m, `${m.merchant.name}-${api === apiA ? 'a' : 'b'}-${i}`);
        const r = await post(api, m, `k-${m.merchant.name}-${api === apiA ? 'a' : 'b'}-${i}`, body);
        expect(r.status, JSON.stringify(r.body)).to.equal(201);
        stored.push({ m, row: r.body.id, recipient: body.recipient });
      }
    }
    await until(() => succeeded(stored.map((s) => s.row)), 'every payout paid');
    const names = { [A.merchant.id]: workerName(procs[0]), [B.merchant.id]: workerName(procs[1]) };
    for (const s of stored) {
      const row = (await getPayout(L.db.pool, s.row)) as PayoutRow;
      expect(row.claimedBy, `payout ${s.row} of ${s.m.merchant.name}`).to.equal(names[s.m.merchant.id]);
      const attempts = await listAttempts(L.db.pool, s.row);
      expect(attempts.map((a) => [a.status, signerOf(a.txBytes)])).to.deep.equal([
        ['landed', s.m.m.authority.publicKey.toBase58()],
      ]);
      await expectExactlyOneTransfer(L.connection, row, new PublicKey(s.recipient));
    }
    // Each worker said at start which merchants it claims for.
    for (const [p, m] of [
      [procs[0], A],
      [procs[1], B],
    ] as const) {
      const said = logsOf(p).find((l) => String(l.msg).startsWith('payout worker merchants'));
      expect((said?.signs as Array<{ id: string }>).map((x) => x.id)).to.deep.equal([m.merchant.id]);
    }
  });

  it("an API key reads only its merchant's payouts; idempotency keys are per merchant", async () => {
    const a = await post(apiA, A, 'shared-key', await payoutBody(A, 'a-shared'));
    const b = await post(apiA, B, 'shared-key', await payoutBody(B, 'b-shared'));
    expect([a.status, b.status]).to.deep.equal([201, 201]);
    expect(a.body.id).to.not.equal(b.body.id);
    for (const api of [apiA, apiB]) {
      const get = (id: string, m: TenantMerchant) =>
        fetch(`${api}/v1/payouts/${id}`, { headers: { authorization: `Bearer ${m.apiKey}` } });
      expect((await get(a.body.id, A)).status).to.equal(200);
      const theirs = await get(a.body.id, B);
      expect([theirs.status, ((await theirs.json()) as { code: string }).code]).to.deep.equal([
        404,
        'PAYOUT_NOT_FOUND',
      ]);
    }
    await until(() => succeeded([a.body.id, b.body.id]), 'both paid');
    // The SDK the same: a merchant's read of another merchant's payout finds nothing.
    const sdk = OncePay.connect({ databaseUrl: L.db.url, schema: L.db.schema });
    try {
      expect(await sdk.getPayout(b.body.id, { merchant: A.merchant.id })).to.equal(null);
      expect((await sdk.getPayout(b.body.id, { merchant: B.merchant.id }))?.id).to.equal(b.body.id);
    } finally {
      await sdk.close();
    }
  });

  it("exception commands see, refund and resolve only their merchant's exceptions", async () => {
    // A customer overpays an invoice at each merchant's vault; the ledger records each excess as an exception.
    const ledger = createLedger({ db: L.db.pool });
    const exceptionAt = async (m: TenantMerchant): Promise<string> => {
      const customer = Keypair.generate();
      await connectionIo(L.connection).fund(customer.publicKey);
      const from = await createTokenAccount(L.connection, m.m.authority, m.m.mint, customer.publicKey);
      await send(
        L.connection,
        [createMintToInstruction(m.m.mint, from, m.m.authority.publicKey, 5_000n)],
        [m.m.authority],
      );
      const invoice = `INV-${m.merchant.name}-${Date.now()}`;
      await ledger.createInvoice({
        id: invoice,
        mint: m.m.mint.toBase58(),
        expectedAmount: 100n,
        depositAddress: m.m.vault.toBase58(),
      });
      const { signature } = await send(
        L.connection,
        [createTransferCheckedInstruction(from, m.m.mint, m.m.vault, customer.publicKey, 150n, 6)],
        [customer],
      );
      const tx = await rpc(L.net.url, 'getTransaction', [
        signature,
        { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 },
      ]);
      await ingestReceipts(ledger, decodeInput(JSON.stringify(tx.result), { cluster: 'localnet' }), {
        cluster: 'localnet',
        source: 'scanner',
        batchSize: 10,
      });
      const { rows } = await L.db.pool.query(`SELECT id::text FROM exceptions WHERE invoice_id = $1`, [invoice]);
      return rows[0].id;
    };
    const exA = await exceptionAt(A);
    const exB = await exceptionAt(B);
    const cli = (args: string[]) => oncepay([...args, '--json'], { env: env() });
    const code = (r: { stderr: string }) =>
      r.stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { code?: string })
        .find((l) => l.code)?.code;

    const listA = await cli(['exception', 'list', '--merchant', A.merchant.id]);
    expect(listA.code, listA.stderr).to.equal(0);
    expect((JSON.parse(listA.stdout) as Array<{ id: string }>).map((e) => e.id)).to.deep.equal([exA]);
    const before = JSON.stringify(
      (
        await L.db.pool.query(
          `SELECT * FROM exceptions e LEFT JOIN exception_resolutions x ON x.exception_id = e.id ORDER BY e.id`,
        )
      ).rows,
    );
    // A's commands on B's exception: not found, nothing changed.
    const refundTheirs = await cli([
      'exception',
      'refund',
      exB,
      '--merchant',
      A.merchant.id,
      '--authority',
      A.authorityFile,
    ]);
    expect([refundTheirs.code, code(refundTheirs)]).to.deep.equal([1, 'ONCEPAY__EXCEPTION__NOT_FOUND']);
    const resolveTheirs = await cli(['exception', 'resolve', exA, '--merchant', B.merchant.id, '--note', 'not mine']);
    expect([resolveTheirs.code, code(resolveTheirs)]).to.deep.equal([1, 'ONCEPAY__EXCEPTION__NOT_FOUND']);
    // B's key cannot pay A's refund either: refused before anything is stored.
    const wrongKey = await cli([
      'exception',
      'refund',
      exA,
      '--merchant',
      A.merchant.id,
      '--authority',
      B.authorityFile,
    ]);
    expect([wrongKey.code, code(wrongKey)]).to.deep.equal([1, 'ONCEPAY__PAYOUT__SIGNER_UNAUTHORIZED']);
    expect(
      JSON.stringify(
        (
          await L.db.pool.query(
            `SELECT * FROM exceptions e LEFT JOIN exception_resolutions x ON x.exception_id = e.id ORDER BY e.id`,
          )
        ).rows,
      ),
    ).to.equal(before);
    // A's own: refunded, by A's key.
    const refund = await cli(['exception', 'refund', exA, '--merchant', A.merchant.id, '--authority', A.authorityFile]);
    expect(refund.code, refund.stderr).to.equal(0);
    expect(JSON.parse(refund.stdout).exception.state).to.equal('refunded');
    const listB = await cli(['exception', 'list', '--merchant', B.merchant.id]);
    expect(
      (JSON.parse(listB.stdout) as Array<{ id: string; state: string }>).map((e) => [e.id, e.state]),
    ).to.deep.equal([[exB, 'open']]);
  });

  it("B rotates its payout authority under B's running worker: the payout it signs with the old key is handed back, not failed, and the new key's worker pays it once", async () => {
    const rotated = Keypair.generate();
    await connectionIo(L.connection).fund(rotated.publicKey);
    await send(
      L.connection,
      [setPayoutAuthorityInstruction(B.m.programId, B.m.authority.publicKey, rotated.publicKey)],
      [B.m.authority],
    );
    const rotatedFile = path.join(L.tmp, 'b-rotated.json');
    fs.writeFileSync(rotatedFile, JSON.stringify([...rotated.secretKey]), { mode: 0o600 });

    const body = await payoutBody(B, 'b-after-rotation');
    const r = await post(apiB, B, 'k-b-after-rotation', body);
    expect(r.status).to.equal(201);
    const id = r.body.id;
    const refused = await until(
      async () => (await listAttempts(L.db.pool, id)).find((a) => a.status === 'failed'),
      'the refused attempt',
    );
    expect([refused.error, signerOf(refused.txBytes)]).to.deep.equal([
      'Unauthorized (6001)',
      B.m.authority.publicKey.toBase58(),
    ]);
    const handedBack = (await getPayout(L.db.pool, id))!;
    expect([handedBack.state, handedBack.lastError]).to.deep.equal(['executing', 'Unauthorized (6001)']);
    await until(
      async () => logsOf(procs[1]).some((l) => String(l.msg).startsWith('attempt refused on chain as Unauthorized')),
      'the refusal logged',
    );
    const metrics = await (await fetch(`${apiB}/metrics`)).text();
    expect(metrics).to.match(/oncepay_payout_worker_handbacks_total\{reason="unauthorized"\} 1/);

    // The worker holding the new payout authority pays it, once.
    const w = startOncepay(
      ['payout', 'worker', '--authority', rotatedFile, '--idle-ms', '50', '--poll-ms', '20'],
      env(),
    );
    procs.push(w);
    await until(() => succeeded([id]), 'paid by the new key');
    const attempts = await listAttempts(L.db.pool, id);
    expect(attempts.map((a) => [a.status, signerOf(a.txBytes)])).to.deep.equal([
      ['failed', B.m.authority.publicKey.toBase58()],
      ['landed', rotated.publicKey.toBase58()],
    ]);
    await expectExactlyOneTransfer(L.connection, (await getPayout(L.db.pool, id))!, new PublicKey(body.recipient));
  });

  it('no process of this suite showed a secret: not the RPC API key, the database password or an API key', () => {
    expectNoSecretShown(currentSuite(), [RPC_API_KEY, passwordOf(L.db.url), A.apiKey, B.apiKey]);
  });
});
