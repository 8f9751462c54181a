// The acceptance test of PostgreSQL high availability: a real pg_auto_failover formation (monitor, primary,
// synchronous standby: db/ha-formation.ts, `oncepay db ha`), and against its multi-host URL the real processes —
// the merchant API (`payout serve`), two payout workers, the scanner (`indexer run`) and the outbox — while payouts
// and invoices are requested through the API (each under its Idempotency-Key) and the invoices paid on the localnet
// as a wallet pays a Solana Pay request (the invoice's reference key on the transfer). Twice the primary goes away under that load: a planned failover
// (`pg_autoctl perform failover`), then an unplanned one (SIGKILL of the primary's postmaster and of its pg_autoctl
// keeper, so nothing restarts it: its machine lost; the monitor's health checks, tightened here to a few seconds,
// promote the standby; the node is started again afterwards and rejoins as a standby). Afterwards: every
// payout and every invoice answered 2xx exists, each payout was paid exactly once on chain (the vault is funded),
// every transfer to an invoice was credited once, every fulfilment reached the merchant under its key, and no process exited. The time each
// process took to write again is printed, never asserted. The formation is started once for the suite (≈40 s) and
// stopped at the end, leaving no process.
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { createAssociatedTokenAccountIdempotentInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { getPayout } from '../../app/payout/store';
import { Client } from 'pg';
import {
  crashNode,
  Formation,
  formationState,
  performFailover,
  startFormation,
  stopFormation,
} from '../../db/ha-formation';
import { FOLLOWED_MESSAGE } from '../../db/host-list';
import { fulfilmentOpId } from '../../indexer/ledger';
import { payInstruction, send } from '../../testkit/cluster';
import { connectionIo, createTokenAccount } from '../../testkit/payout/setup';
import { createTestDb } from '../../testkit/test-db';
import {
  expectExactlyOneTransfer,
  expectJournalConsistent,
  PayoutLocalnet,
  startPayoutLocalnet,
} from '../app/payout/localnet-setup';
import { freePorts } from '../../common/free-port';
import { getJson, Proc, startOncepay, waitFor } from '../faults/support';
import { stderrJson } from '../indexer/cli/run-cli';
import { MerchantServer, startMerchantServer } from '../indexer/outbox/merchant-server';
import { merchantWithInvoice, Merchant } from '../indexer/source/transfer-fixture';

const SECRET = 'whsec-ha-failover';
const PAYOUTS_PER_PHASE = 6;
const INVOICES_PER_PHASE = 3;
const PHASES = ['before', 'planned failover', 'unplanned failover'] as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Invoice {
  /** The merchant's invoice id (the API's); the ledger's row is `ledgerId`, known once the API answered 2xx. */
  id: string;
  ledgerId?: string;
  wallet: PublicKey;
  ata: PublicKey;
  amounts: bigint[];
  reference?: PublicKey;
  signatures: string[];
}

describe('ha: a failover under load loses nothing acknowledged and doubles nothing', function () {
  // A formation start (≈40 s), two failovers and real processes on a shared 2-core machine: bounded, never timed.
  this.timeout(900_000);
  let dir: string;
  let formation: Formation;
  let url: string;
  let L: PayoutLocalnet;
  let payer: Merchant;
  let merchantServer: MerchantServer;
  let api: Proc;
  let apiUrl: string;
  const procs: { name: string; proc: Proc }[] = [];
  const invoices: Invoice[] = [];
  /** Every payout the API answered 2xx: its id, the recipient it pays. */
  const acknowledged: { id: string; payoutId: string; recipient: PublicKey }[] = [];
  const failoverStarts: { phase: string; at: number }[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-ha-test-'));
    fs.chmodSync(dir, 0o755);
    ({ formation, url } = await startFormation(path.join(dir, 'formation')));
    await tightenHealthChecks();
    L = await startPayoutLocalnet('ha_failover', { db: () => createTestDb('ha_failover', url) });
    merchantServer = await startMerchantServer();
  });

  after(async () => {
    for (const { proc } of procs) if (proc.alive()) proc.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.proc.done));
    // Each process's log, for whoever reads a failure (the suite prints only its summary).
    const logs = path.join(__dirname, '..', '..', '.oncepay', 'test-logs');
    fs.mkdirSync(logs, { recursive: true });
    for (const { name, proc } of procs) fs.writeFileSync(path.join(logs, `ha-${name}.log`), proc.stderr());
    await merchantServer?.close();
    await L?.stop().catch(() => undefined);
    if (dir) await stopFormation(path.join(dir, 'formation')); // also what a creation that failed half-way started
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The monitor's health checks every second, a node unhealthy after 3 s and a lost primary taken as demoted after
   * 5 s (pg_auto_failover's defaults: 5 s, 20 s and 30 s; the last one is the wait that keeps an unreachable old
   * primary from still taking writes, which a real formation keeps), so the unplanned failover fits the suite's
   * bound. The failover itself is unchanged.
   */
  async function tightenHealthChecks(): Promise<void> {
    const c = new Client({ host: '127.0.0.1', port: formation.monitorPort, user: 'postgres', database: 'postgres' });
    await c.connect();
    try {
      for (const [k, v] of [
        ['pgautofailover.health_check_period', '1000'],
        ['pgautofailover.health_check_retry_delay', '500'],
        ['pgautofailover.node_considered_unhealthy_timeout', '3000'],
        ['pgautofailover.primary_demote_timeout', '5000'],
      ])
        await c.query(`ALTER SYSTEM SET ${k} = ${v}`);
      await c.query('SELECT pg_reload_conf()');
    } finally {
      await c.end();
    }
  }

  /** A process with a metrics server on `port`; resolves once its /readyz answers 200, fails at once if it exits. */
  async function start(name: string, args: string[], port: number): Promise<Proc> {
    const proc = startOncepay([...args, '--metrics-port', String(port)], {
      ...L.db.env,
      ONCEPAY_DB_CONNECT_TIMEOUT_MS: '2000',
      ONCEPAY_WEBHOOK_SECRET: SECRET,
    });
    procs.push({ name, proc });
    for (;;) {
      if (!proc.alive()) throw new Error(`${name} exited: ${proc.stderr()}`);
      const ready = await getJson(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) return proc;
      await sleep(100);
    }
  }

  /** POSTs payout `i` until it is answered 2xx; every other answer must be "come back later". */
  async function requestPayout(i: number, recipient: PublicKey): Promise<void> {
    const payoutId = `ha-po-${i}`;
    for (;;) {
      let r: Response;
      try {
        r = await fetch(`${apiUrl}/v1/payouts`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${L.apiKey}`,
            'content-type': 'application/json',
            'idempotency-key': `ha-key-${i}`,
          },
          body: JSON.stringify({
            payoutId,
            recipient: recipient.toBase58(),
            mint: L.m.mint.toBase58(),
            amount: '1000',
          }),
        });
      } catch (e) {
        throw new Error(`the API did not answer (it must stay up): ${(e as Error).message}`, { cause: e });
      }
      const body = (await r.json()) as Record<string, unknown>;
      if (r.status === 201 || r.status === 200) {
        expect(body, 'a 2xx is this request’s payout').to.include({ payoutId, amount: '1000' });
        acknowledged.push({ id: String(body.id), payoutId, recipient });
        return;
      }
      const ok = (r.status === 503 && body.code === 'DATABASE_UNAVAILABLE') || r.status === 409;
      expect(ok, `payout ${i}: ${r.status} ${JSON.stringify(body)}`).to.equal(true);
      if (r.status === 503) expect(r.headers.get('retry-after')).to.match(/^[0-9]+$/);
      await sleep(200);
    }
  }

  /** Deposit wallets with their token accounts, one per invoice to come (the invoices are asked of the API under load). */
  async function createWallets(n: number): Promise<void> {
    const wallets = Array.from({ length: n }, () => Keypair.generate().publicKey);
    const atas = wallets.map((w) => getAssociatedTokenAddressSync(payer.mint, w));
    await send(
      payer.connection,
      wallets.map((w, k) =>
        createAssociatedTokenAccountIdempotentInstruction(payer.payer.publicKey, atas[k], w, payer.mint),
      ),
      [payer.payer],
    );
    for (let k = 0; k < n; k++) {
      const id = `ha-inv-${invoices.length}`;
      const amounts = [BigInt(1_000 + invoices.length), BigInt(2_000 + invoices.length)];
      invoices.push({ id, wallet: wallets[k], ata: atas[k], amounts, signatures: [] });
    }
  }

  /** POSTs invoice `inv` until it is answered 2xx; every other answer must be "come back later". */
  async function requestInvoice(inv: Invoice): Promise<void> {
    for (;;) {
      let r: Response;
      try {
        r = await fetch(`${apiUrl}/v1/invoices`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${L.apiKey}`,
            'content-type': 'application/json',
            'idempotency-key': `ha-key-${inv.id}`,
          },
          body: JSON.stringify({
            invoiceId: inv.id,
            amount: String(inv.amounts[0] + inv.amounts[1]),
            mint: payer.mint.toBase58(),
            recipient: inv.wallet.toBase58(),
          }),
        });
      } catch (e) {
        throw new Error(`the API did not answer (it must stay up): ${(e as Error).message}`, { cause: e });
      }
      const body = (await r.json()) as Record<string, unknown>;
      if (r.status === 201 || r.status === 200) {
        expect(body, 'a 2xx is this request’s invoice').to.include({ invoiceId: inv.id, status: 'open' });
        inv.reference = new PublicKey(String(body.reference));
        return;
      }
      const ok = (r.status === 503 && body.code === 'DATABASE_UNAVAILABLE') || r.status === 409;
      expect(ok, `invoice ${inv.id}: ${r.status} ${JSON.stringify(body)}`).to.equal(true);
      await sleep(200);
    }
  }

  /** Pays `inv` as a wallet pays its Solana Pay request: transfers carrying the reference key, sent at once. */
  async function pay(inv: Invoice): Promise<void> {
    const { blockhash } = await payer.connection.getLatestBlockhash();
    for (const amount of inv.amounts) {
      const tx = new Transaction({ feePayer: payer.payer.publicKey, recentBlockhash: blockhash }).add(
        payInstruction({
          from: payer.source,
          mint: payer.mint,
          to: inv.ata,
          owner: payer.payer.publicKey,
          amount,
          decimals: 6,
          reference: inv.reference!,
        }),
      );
      tx.sign(payer.payer);
      inv.signatures.push(await payer.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true }));
    }
  }

  /** One phase of load: payouts requested one after another while the invoices of the phase are paid. */
  async function load(phase: number, recipients: PublicKey[]): Promise<void> {
    const payouts = (async () => {
      for (let k = 0; k < PAYOUTS_PER_PHASE; k++) {
        const i = phase * PAYOUTS_PER_PHASE + k;
        await requestPayout(i, recipients[i]);
      }
    })();
    const paying = (async () => {
      for (const inv of invoices.slice(phase * INVOICES_PER_PHASE, (phase + 1) * INVOICES_PER_PHASE)) {
        await requestInvoice(inv);
        await pay(inv);
        await sleep(300);
      }
    })();
    await Promise.all([payouts, paying]);
  }

  /** Crashes the primary's node (postmaster and keeper, SIGKILL); returns its port. */
  async function crashPrimary(): Promise<number> {
    const state = await formationState(formation);
    expect(state.primary, JSON.stringify(state.nodes)).to.not.equal(undefined);
    crashNode(formation, formation.nodePorts.indexOf(state.primary!.port));
    return state.primary!.port;
  }

  it('API, two payout workers, the scanner and the outbox through a planned and an unplanned failover', async () => {
    const recipients: PublicKey[] = [];
    for (let i = 0; i < PAYOUTS_PER_PHASE * PHASES.length; i++)
      recipients.push(
        await createTokenAccount(connectionIo(L.connection), L.m.authority, L.m.mint, Keypair.generate().publicKey),
      );
    payer = await merchantWithInvoice(L.net, L.db, 'ha-inv-setup', 1n);
    await createWallets(INVOICES_PER_PHASE * PHASES.length);

    const [apiPort, ...ports] = await freePorts(5);
    // ONCEPAY_RPC_URL (not --rpc: no worker pool here): the API reads a new invoice's mint decimals from the node.
    api = startOncepay(['payout', 'serve', '--port', String(apiPort)], {
      ...L.db.env,
      ONCEPAY_DB_CONNECT_TIMEOUT_MS: '2000',
      ONCEPAY_RPC_URL: L.net.url,
    });
    procs.push({ name: 'api', proc: api });
    apiUrl = `http://127.0.0.1:${apiPort}`;
    await waitFor(async () => (await getJson(`${apiUrl}/readyz`)).status === 200, 'the API to be ready');
    // Every process up and ready before the first failover (a ts-node start takes a while on a loaded machine).
    const workerArgs = ['payout', 'worker', '--rpc', L.net.url, '--authority', L.authorityFile];
    const scannerArgs = ['indexer', 'run', '--rpc', L.net.url, '--cluster', 'localnet', '--from-slot'];
    const outboxArgs = ['outbox', 'run', '--url', merchantServer.url, '--poll-ms', '50', '--lease-seconds', '5'];
    await Promise.all([
      start('worker-1', [...workerArgs, '--poll-ms', '50', '--idle-ms', '50'], ports[0]),
      start('worker-2', [...workerArgs, '--poll-ms', '50', '--idle-ms', '50'], ports[1]),
      start(
        'scanner',
        [...scannerArgs, String(payer.startSlot), '--poll-ms', '50', '--rpc-timeout-ms', '2000'],
        ports[2],
      ),
      start('outbox', [...outboxArgs, '--backoff-base-ms', '50', '--timeout-ms', '5000'], ports[3]),
    ]);

    // Phase 0 on the first primary; phase 1 while pg_autoctl performs a failover; phase 2 after the new primary's
    // node crashed, until the standby is promoted. Then the crashed node is started again and rejoins.
    await load(0, recipients);
    failoverStarts.push({ phase: PHASES[1], at: Date.now() });
    const planned = performFailover(formation);
    await load(1, recipients);
    await planned;
    failoverStarts.push({ phase: PHASES[2], at: Date.now() });
    const crashed = await crashPrimary();
    await load(2, recipients);
    await waitFor(async () => {
      const s = await formationState(formation);
      return s.nodes.some((n) => n.port !== crashed && n.reported === n.assigned && /primary/.test(n.reported));
    }, 'the standby to be promoted');
    await startFormation(formation.dir); // the crashed node's keeper again: it rejoins as a standby (settled)

    // Every acknowledged payout paid; every invoice paid and its fulfilment delivered.
    await waitFor(async () => {
      const { rows } = await L.db.pool.query(`SELECT count(*)::int AS n FROM payouts WHERE state = 'succeeded'`);
      return rows[0].n === acknowledged.length;
    }, 'every acknowledged payout to succeed');
    // Every invoice the API answered 2xx exists, once, and names its ledger row (the one the indexer credits).
    const { rows: stored } = await L.db.pool.query(
      `SELECT invoice_id, ledger_invoice_id FROM api_invoices ORDER BY invoice_id`,
    );
    expect(stored.map((r) => r.invoice_id)).to.deep.equal(invoices.map((inv) => inv.id).sort());
    for (const inv of invoices) inv.ledgerId = stored.find((r) => r.invoice_id === inv.id)!.ledger_invoice_id;
    const ids = invoices.map((inv) => inv.ledgerId!);
    await waitFor(async () => {
      const { rows } = await L.db.pool.query(
        `SELECT count(*)::int AS n FROM invoices WHERE id = ANY($1) AND status = 'paid'`,
        [ids],
      );
      return rows[0].n === ids.length;
    }, 'every invoice to be paid');
    await waitFor(
      () => new Set(merchantServer.seen.map((s) => s.idempotencyKey)).size >= ids.length,
      'every fulfilment delivered',
    );

    for (const { name, proc } of procs)
      expect(proc.alive(), `${name} exited: ${proc.stderr().slice(-2000)}`).to.equal(true);

    // Payouts: every 2xx exists, paid exactly once on chain, the journal agreeing.
    expect(acknowledged.map((a) => a.payoutId)).to.have.length(PAYOUTS_PER_PHASE * PHASES.length);
    for (const a of acknowledged) {
      const row = await getPayout(L.db.pool, a.id);
      expect(row, `acknowledged payout ${a.payoutId} exists`).to.not.equal(null);
      expect(row!.merchantPayoutId).to.equal(a.payoutId);
      await expectExactlyOneTransfer(L.connection, row!, a.recipient);
      await expectJournalConsistent(L.db, L.connection, row!);
    }
    const { rows: counts } = await L.db.pool.query(`SELECT count(*)::int AS n FROM payouts`);
    expect(counts[0].n, 'no payout row but the acknowledged ones').to.equal(acknowledged.length);

    // Receipts: each transfer stored once, each invoice credited exactly its transfers.
    for (const inv of invoices) {
      const { rows } = await L.db.pool.query(
        `SELECT count(*)::int AS n, coalesce(sum(amount), 0)::text AS s FROM receipts WHERE signature = ANY($1)`,
        [inv.signatures],
      );
      expect(rows[0], inv.id).to.deep.equal({ n: inv.signatures.length, s: String(inv.amounts[0] + inv.amounts[1]) });
      const c = await L.db.pool.query(`SELECT credited_amount::text AS c, status FROM invoices WHERE id = $1`, [
        inv.ledgerId,
      ]);
      expect(c.rows[0], inv.id).to.deep.equal({ c: String(inv.amounts[0] + inv.amounts[1]), status: 'paid' });
    }

    // Fulfilments: exactly the invoices', each under its own key with its own body.
    const keys = new Set(merchantServer.seen.map((s) => s.idempotencyKey));
    expect([...keys].sort()).to.deep.equal(ids.map(fulfilmentOpId).sort());
    for (const s of merchantServer.seen) expect(JSON.parse(s.body).fulfilmentId).to.equal(s.idempotencyKey);

    // Every process followed each failover (its connections moved to the new primary, logged once per move). A process
    // with nothing to write may still be in its reconnect backoff when the work is done: it is given that time.
    const followedAll = () =>
      failoverStarts.every((f, k) =>
        procs.every(({ proc }) => followed(proc).some((x) => x >= f.at && x < (failoverStarts[k + 1]?.at ?? Infinity))),
      );
    await waitFor(async () => followedAll(), 'every process to write on the new primary after each failover').catch(
      () => undefined, // the assertion below names who did not
    );
    const times = report();
    for (const [phase, cells] of Object.entries(times))
      for (const [name, t] of Object.entries(cells)) expect(t, `${name} followed the ${phase}`).to.not.equal(undefined);
  });

  it('`oncepay db ha stop` leaves no pg_autoctl keeper and no postgres of the formation', async () => {
    await stopFormation(formation.dir);
    const left = fs
      .readdirSync('/proc')
      .filter((p) => /^[0-9]+$/.test(p))
      .map((p) => {
        try {
          return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
        } catch {
          return '';
        }
      })
      .filter((cmd) => cmd.includes(formation.dir));
    expect(left).to.deep.equal([]);
  });

  /** Times (ms since epoch) at which this process logged that its connections moved to another host. */
  function followed(proc: Proc): number[] {
    const done = {
      code: null,
      signal: null,
      stdout: '',
      stderr: proc.stderr().slice(0, proc.stderr().lastIndexOf('\n') + 1),
    };
    return stderrJson(done)
      .filter((l) => l.msg === FOLLOWED_MESSAGE)
      .map((l) => Number(l.time));
  }

  /** Prints, per failover and process, how long after the failover began it wrote to the new primary; returns them. */
  function report(): Record<string, Record<string, number | undefined>> {
    const out: Record<string, Record<string, number | undefined>> = {};
    const lines = ['time to write again on the new primary (first writable connection after the failover began):'];
    for (const [k, f] of failoverStarts.entries()) {
      const end = failoverStarts[k + 1]?.at ?? Infinity;
      out[f.phase] = {};
      for (const { name, proc } of procs) {
        const t = followed(proc).find((x) => x >= f.at && x < end);
        out[f.phase][name] = t === undefined ? undefined : t - f.at;
      }
      const cells = Object.entries(out[f.phase]).map(
        ([name, ms]) => `${name} ${ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(1)} s`}`,
      );
      lines.push(`  ${f.phase}: ${cells.join(', ')}`);
    }
    console.log(lines.join('\n'));
    return out;
  }
});
