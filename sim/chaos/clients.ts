// The outside world of a chaos run, acting as its clients do: customers' wallets paying invoices (through a node of
// their own: straight into the localnet's chain, so the faults armed on the RPC are the processes' alone), the
// merchant's code creating payouts through the API under an Idempotency-Key (retrying with the same key while the
// API is down or answers 5xx, as its contract asks), the provider delivering webhook events (again until a 2xx,
// and again on purpose), and the operator refunding an exception with `oncepay exception refund`.
import { Transaction } from '@solana/web3.js';
import { createTransferCheckedInstruction } from '@solana/spl-token';
import { signDelivery } from '../../indexer/source/webhook-auth';
import { type Proc, startOncepay } from '../../tests/faults/support';
import { distIsCurrent } from '../../testkit/dist';
import type { FailpointName } from '../../common/fault-space';
import { OVERPAYMENT } from './plan';
import { type Stage, WEBHOOK_SECRET } from './stage';
import { sleep } from '../../common/sleep';

/** One answer of the merchant API to a payout request. */
export interface ApiAnswer {
  key: string;
  /** The request body's payout id and amount (a conflicting request differs in the amount). */
  payoutId: string;
  amount: string;
  status: number;
  code: string | null;
  /** The stored payout's row id (2xx only). */
  rowId: string | null;
  replayed: boolean;
}

export interface Clients {
  /** Signatures and slots of the customers' transactions, by payment index. */
  payments: Map<number, { signature: string; slot: number }>;
  api: ApiAnswer[];
  webhook: Array<{ event: number; status: number }>;
  pay(i: number): Promise<void>;
  createPayout(i: number, opts?: { amountDelta?: bigint }): Promise<ApiAnswer>;
  deliver(event: number, until: () => boolean): Promise<void>;
  /**
   * `oncepay exception refund` of the overpayment, once (armed at its failpoint or not): its exit code and its
   * last words; null before the exception is in the ledger.
   */
  refund(failpoint: FailpointName | null): Promise<{ code: number | null; signal: string | null; tail: string } | null>;
}

/** What the clients share: the stage, the ports they talk to, and what they have seen so far. */
interface ClientState {
  s: Stage;
  ports: { api: number; webhook: number };
  payments: Clients['payments'];
  api: ApiAnswer[];
  webhook: Clients['webhook'];
  fromSource: boolean;
}

export function createClients(s: Stage, ports: { api: number; webhook: number }): Clients {
  const c: ClientState = { s, ports, payments: new Map(), api: [], webhook: [], fromSource: !distIsCurrent() };
  return {
    payments: c.payments,
    api: c.api,
    webhook: c.webhook,
    pay: (i) => pay(c, i),
    createPayout: (i, opts) => createPayout(c, i, opts),
    deliver: (event, until) => deliver(c, event, until),
    refund: (failpoint) => refund(c, failpoint),
  };
}

/** A customer's payment, straight into the chain, confirmed. */
async function pay(c: ClientState, i: number): Promise<void> {
  const { s, payments } = c;
  const who = s.customers[i];
  const ixs = s.plan.payments[i].map((t) =>
    createTransferCheckedInstruction(who.token, s.m.mint, s.invoices[t.invoice].deposit, who.kp.publicKey, t.amount, 6),
  );
  const chain = s.net.chain;
  const tx = new Transaction({
    feePayer: who.kp.publicKey,
    recentBlockhash: chain.blockAt('confirmed').blockhash,
  }).add(...ixs);
  tx.sign(who.kp);
  const signature = chain.submit(tx.serialize(), { preflightCommitment: 'confirmed' });
  for (;;) {
    const st = chain.signatureStatus(signature, true);
    if (st && st.confirmationStatus !== 'processed') {
      payments.set(i, { signature, slot: st.slot });
      return;
    }
    await sleep(50);
  }
}

/** The merchant's payout request, retried under the same key while the API is down, 5xx or in progress. */
async function createPayout(c: ClientState, i: number, opts: { amountDelta?: bigint } = {}): Promise<ApiAnswer> {
  const { s, ports, api } = c;
  const key = `key-${s.plan.seed}-${i}`;
  const payoutId = `po-${s.plan.seed}-${i}`;
  const amount = (s.plan.payouts[i] + (opts.amountDelta ?? 0n)).toString();
  const body = JSON.stringify({ payoutId, recipient: s.recipients[i].toBase58(), mint: s.m.mint.toBase58(), amount });
  for (;;) {
    let status = 0;
    let json: Record<string, unknown> = {};
    let replayed = false;
    try {
      const r = await fetch(`http://127.0.0.1:${ports.api}/v1/payouts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.apiKey}`, 'idempotency-key': key, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      status = r.status;
      replayed = r.headers.get('idempotent-replayed') === 'true';
      json = (await r.json().catch(() => ({}))) as Record<string, unknown>;
    } catch {
      // The API is down or the connection dropped (status stays 0): the client retries with the same key.
    }
    const code = typeof json.code === 'string' ? json.code : null;
    if (status === 0 || status >= 500 || code === 'IDEMPOTENCY_IN_PROGRESS') {
      await sleep(200);
      continue;
    }
    const rowId = status < 300 ? String((json.payout as { id?: unknown } | undefined)?.id ?? json.id ?? '') : null;
    const a: ApiAnswer = { key, payoutId, amount, status, code, rowId: rowId || null, replayed };
    api.push(a);
    return a;
  }
}

/** The provider's delivery of one webhook event, until a 2xx or the run's end. */
async function deliver(c: ClientState, event: number, until: () => boolean): Promise<void> {
  const { s, ports, payments, webhook } = c;
  const sigs = s.plan.events[event].map((p) => payments.get(p)?.signature).filter((x): x is string => !!x);
  if (sigs.length === 0) return;
  const body = JSON.stringify(sigs);
  for (;;) {
    let status = 0;
    try {
      const r = await fetch(`http://127.0.0.1:${ports.webhook}/v1/webhooks/helius`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-oncepay-event-id': `evt-${s.plan.seed}-${event}`,
          'x-oncepay-signature': signDelivery(WEBHOOK_SECRET, body, Math.floor(Date.now() / 1000)),
        },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      status = r.status;
      await r.text();
    } catch {
      // The receiver is down (status stays 0): the provider delivers again.
    }
    webhook.push({ event, status });
    // A provider delivers until it gets a 2xx (at least once), and gives up when the run is over.
    if ((status >= 200 && status < 300) || until()) return;
    await sleep(300);
  }
}

/** `oncepay exception refund` of the overpayment, once. */
async function refund(c: ClientState, failpoint: FailpointName | null): ReturnType<Clients['refund']> {
  const { s, fromSource } = c;
  // Whichever of the invoice's two payments lands second overpays it.
  const invoice = s.invoices[s.plan.payments[OVERPAYMENT][0].invoice].id;
  const row = (
    await s.db.pool
      .query(`SELECT id::text FROM exceptions WHERE invoice_id = $1 AND kind = 'overpayment'`, [invoice])
      .catch(() => ({ rows: [] as Array<{ id: string }> }))
  ).rows[0] as { id: string } | undefined;
  if (!row) return null;
  const proc: Proc = startOncepay(
    [
      ...['exception', 'refund', row.id, '--authority', s.authorityFile, '--rpc', s.net.url],
      ...[
        '--merchant',
        s.merchant.id,
        '--to',
        s.refundTo.toBase58(),
        '--poll-ms',
        '100',
        '--timeout-ms',
        '60000',
        '--json',
      ],
    ],
    { ...s.db.env, ...(failpoint ? { ONCEPAY_FAILPOINT: failpoint } : {}) },
    { fromSource },
  );
  const orphanGuard = () => proc.alive() && proc.child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const r = await proc.done;
  process.removeListener('exit', orphanGuard);
  return { code: r.code, signal: r.signal, tail: r.stderr.slice(-600) };
}
