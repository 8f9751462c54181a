// Crash injection: the CLI is SIGKILLed (a real kill -9, armed through ONCEPAY_FAILPOINT) at the named
// boundaries; a plain re-run must then leave the books exactly as if nothing had happened.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { expect } from 'chai';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { createLedger, fulfilmentOpId } from '../../../indexer/ledger';
import { verifySignature } from '../../../indexer/delivery';
import { addr, jsonLines, receipt, sig } from '../ledger/fixtures';
import { oncepay } from './run-cli';
import { currentSuite, expectNoSecretShown, passwordOf } from '../../faults/secrets';
import { expectedTotals, paymentDataset, USDC } from './dataset';
import { unbalancedInvoices } from './balances';
import { startMerchantServer, MerchantServer } from '../outbox/merchant-server';

describe('indexer/cli: crash injection', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-crash-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const point of ['ledger.after_insert_before_commit', 'ledger.after_commit']) {
    it(`ingest killed at ${point} (2nd batch), then re-run: totals exact, nothing lost or doubled`, async () => {
      const t = await createTestDb('crash_ledger');
      try {
        const n = 8;
        const ds = paymentDataset(n);
        const ledger = createLedger({ db: t.pool });
        for (const inv of ds.invoices)
          await ledger.createInvoice({
            id: inv.id,
            mint: USDC,
            expectedAmount: BigInt(inv.amount),
            depositAddress: inv.depositAddress,
          });
        const file = path.join(dir, `${point}.jsonl`);
        fs.writeFileSync(file, jsonLines(ds.txs));
        const args = ['ingest', file, '--cluster', 'localnet', '--batch-size', '5'];
        const crashed = await oncepay(args, { env: { ...t.env, ONCEPAY_FAILPOINT: `${point}@2` } });
        expect(crashed.signal).to.equal('SIGKILL');
        expect(crashed.stderr).to.contain(point);
        const committed = point === 'ledger.after_commit' ? 10 : 5;
        const q = async (sql: string) => (await t.pool.query(sql)).rows;
        expect(await q(`SELECT count(*)::int AS n FROM receipts`)).to.deep.equal([{ n: committed }]);
        // The checkpoint moved with the committed batches only.
        const slots = ds.txs.map((x) => Number(x.slot));
        const wantSlot = String(Math.max(...slots.slice(0, committed / 5 === 1 ? 5 : 10)));
        expect(await q(`SELECT slot::text FROM checkpoints`)).to.deep.equal([{ slot: wantSlot }]);
        expect(await unbalancedInvoices(t.pool)).to.deep.equal([]);

        const rerun = await oncepay(args, { env: t.env });
        expect(rerun.code, rerun.stderr).to.equal(0);
        expect(JSON.parse(rerun.stdout)).to.deep.include({
          inserted: expectedTotals(n).receipts - committed,
          duplicates: committed,
        });
        const want = expectedTotals(n);
        expect(await q(`SELECT count(*)::int AS n FROM receipts`)).to.deep.equal([{ n: want.receipts }]);
        expect(
          await q(
            `SELECT count(*)::int AS n FROM invoices WHERE status = 'paid' AND credited_amount = expected_amount`,
          ),
        ).to.deep.equal([{ n: want.invoicesPaid }]);
        expect(
          await q(
            `SELECT kind::text, count(*)::int AS n, sum(amount)::text AS a FROM exceptions GROUP BY kind ORDER BY kind`,
          ),
        ).to.deep.equal([
          { kind: 'late_payment', n: 1, a: '25' },
          { kind: 'overpayment', n: want.exceptions.overpayment.count, a: want.exceptions.overpayment.amount },
        ]);
        expect(
          await q(`SELECT count(*)::int AS n, count(DISTINCT invoice_id)::int AS d FROM fulfilments`),
        ).to.deep.equal([{ n: want.invoicesPaid, d: want.invoicesPaid }]);
        expect(await unbalancedInvoices(t.pool)).to.deep.equal([]);
      } finally {
        await t.drop();
      }
    });
  }

  describe('outbox', () => {
    let t: TestDb;
    let merchant: MerchantServer;
    const SECRET = 'whsec_crash';
    beforeEach(async () => {
      t = await createTestDb('crash_outbox');
      merchant = await startMerchantServer();
    });
    afterEach(async () => {
      await merchant.close();
      await t.drop();
    });

    async function pay(ids: string[]) {
      const ledger = createLedger({ db: t.pool });
      for (const id of ids)
        await ledger.createInvoice({ id, mint: USDC, expectedAmount: 10n, depositAddress: addr(`o-${id}`) });
      await ledger.applyBatch({
        cluster: 'localnet',
        source: 'scanner',
        receipts: ids.map((id) => receipt({ signature: sig(`o-${id}`), destination: addr(`o-${id}`), amount: 10n })),
      });
    }

    it('killed after the HTTP response, before marking delivered: the restart re-sends the SAME Idempotency-Key, never a new one', async () => {
      await pay(['OA', 'OB']);
      const base = [
        'outbox',
        'run',
        '--url',
        merchant.url,
        '--lease-seconds',
        '1',
        '--batch-size',
        '1',
        '--poll-ms',
        '100',
      ];
      // The HMAC secret in the environment, never on the command line (`ps`): the suite's last case checks it.
      const crashed = await oncepay([...base, '--once'], {
        env: { ...t.env, ONCEPAY_WEBHOOK_SECRET: SECRET, ONCEPAY_FAILPOINT: 'outbox.after_response_before_mark' },
      });
      expect(crashed.signal).to.equal('SIGKILL');
      expect(merchant.seen).to.have.length(1);
      const firstKey = merchant.seen[0].idempotencyKey;
      expect([fulfilmentOpId('OA'), fulfilmentOpId('OB')]).to.include(firstKey);
      expect(
        (await t.pool.query(`SELECT state FROM outbox WHERE fulfilment_id = $1`, [firstKey])).rows[0].state,
      ).to.equal('delivering');

      // The restarted worker waits out the dead worker's lease, then delivers both rows.
      const restarted = await oncepay([...base, '--drain'], { env: { ...t.env, ONCEPAY_WEBHOOK_SECRET: SECRET } });
      expect(restarted.code, restarted.stderr).to.equal(0);
      const keys = merchant.seen.map((s) => s.idempotencyKey);
      expect(keys.filter((k) => k === firstKey)).to.have.length(2);
      expect(new Set(keys)).to.deep.equal(new Set([fulfilmentOpId('OA'), fulfilmentOpId('OB')]));
      expect(keys).to.have.length(3);
      for (const s of merchant.seen)
        expect(verifySignature(SECRET, s.signature, s.body, { nowSeconds: Math.floor(Date.now() / 1000) })).to.equal(
          true,
        );
      const rows = (await t.pool.query(`SELECT fulfilment_id, state, attempts FROM outbox ORDER BY fulfilment_id`))
        .rows;
      expect(rows.every((r) => r.state === 'delivered')).to.equal(true);
      expect(rows.find((r) => r.fulfilment_id === firstKey)!.attempts).to.equal(2);
    });

    it('retries, dead-letters after --max-attempts, and `outbox replay --all-dead` re-queues with the same key', async () => {
      await pay(['OD']);
      merchant.respond = () => 500;
      const run = [
        'outbox',
        'run',
        '--drain',
        '--url',
        merchant.url,
        '--max-attempts',
        '3',
        '--backoff-base-ms',
        '0',
        '--backoff-cap-ms',
        '0',
        '--poll-ms',
        '20',
      ];
      const failing = await oncepay(run, { env: { ...t.env, ONCEPAY_WEBHOOK_SECRET: SECRET } });
      expect(failing.code, failing.stderr).to.equal(0);
      expect(JSON.parse(failing.stdout)).to.deep.equal({ claimed: 3, delivered: 0, failed: 2, dead: 1 });
      expect(failing.stderr).to.contain('ONCEPAY__OUTBOX__DEAD_LETTER');
      const rep = JSON.parse((await oncepay(['report', '--json'], { env: t.env })).stdout);
      expect(rep.outbox).to.deep.equal({ pending: 0, delivering: 0, delivered: 0, dead: 1 });

      merchant.respond = () => 200;
      const replay = await oncepay(['outbox', 'replay', '--all-dead'], { env: t.env });
      expect(JSON.parse(replay.stdout).requeued).to.have.length(1);
      const ok = await oncepay(run, { env: { ...t.env, ONCEPAY_WEBHOOK_SECRET: SECRET } });
      expect(JSON.parse(ok.stdout)).to.deep.equal({ claimed: 1, delivered: 1, failed: 0, dead: 0 });
      expect(merchant.seen.map((s) => s.idempotencyKey)).to.deep.equal(Array(4).fill(fulfilmentOpId('OD')));
    });

    it('no process of this suite showed a secret it was configured with: not the HMAC secret or the database password, in its output or its command line', () => {
      expectNoSecretShown(currentSuite(), [SECRET, passwordOf(t.url)]);
    });
  });
});
