// The Evidence of a chaos run, gathered once the faults are cleared, from three independent places: the chain over
// RPC (each op account's transactions and whether they paid, each recipient's balance, and every transfer of every
// finalized block of the run, decoded), PostgreSQL (the payout journal, receipts, invoices, exceptions, fulfilments,
// outbox, delivery counters, refunds) and the merchant endpoint's own record of what it applied.
import { Connection, PublicKey } from '@solana/web3.js';
import { customErrorCode } from '../../app/program/errors';
import { listAttempts } from '../../app/payout/store';
import { decodeBlock } from '../../indexer/decode';
import { createRpcClient } from '../../indexer/rpc';
import { tokenBalance } from '../../testkit/cluster';
import type { Evidence } from '../evidence';
import { CHAOS_CLUSTER, type Stage } from './stage';
import { OncepayError, SIM_CODES } from '../../common/errors';

const key = (signature: string, ix: number, inner: number) => `${signature}/${ix}/${inner}`;

async function chainTransfers(s: Stage, deposits: Set<string>): Promise<Evidence['transfers']> {
  const rpc = createRpcClient({ url: s.net.url, retry: { attempts: 5, timeoutMs: 10_000 } });
  const finalized = await rpc.getSlot('finalized');
  const out: Evidence['transfers'] = [];
  for (const slot of await rpc.getBlocks(s.firstSlot, finalized, 'finalized')) {
    const got = await rpc.getBlock(slot, 'finalized');
    if (got.status === 'skipped') continue;
    if (got.status !== 'ok')
      throw new OncepayError(SIM_CODES.EVIDENCE_MISSING, `block ${slot} is not available: ${got.message}`);
    for (const r of decodeBlock(got.block, { slot, cluster: CHAOS_CLUSTER })) {
      out.push({
        key: key(r.signature, r.ixIndex, r.innerIndex),
        amount: r.amount,
        watched: deposits.has(r.destination) || (r.destinationOwner !== null && deposits.has(r.destinationOwner)),
        final: true,
      });
    }
  }
  return out;
}

export async function gatherEvidence(s: Stage): Promise<Evidence> {
  const q = async <T>(text: string, values: unknown[] = []) => (await s.db.pool.query(text, values)).rows as T[];
  const connection = new Connection(s.net.url, 'confirmed');
  const rows = await q<{
    id: string;
    merchant_payout_id: string;
    op_pda: string;
    amount: string;
    recipient_token: string;
    state: string;
    result_signature: string | null;
  }>(
    'SELECT id::text, merchant_payout_id, op_pda, amount::text, recipient_token, state, result_signature FROM payouts',
  );
  const payouts: Evidence['payouts'] = [];
  const opTransactions: Evidence['opTransactions'] = [];
  const recipientBalances = new Map<string, bigint>();
  for (const p of rows) {
    const attempts = await listAttempts(s.db.pool, p.id);
    payouts.push({
      id: p.id,
      payoutId: p.merchant_payout_id,
      opId: p.op_pda,
      amount: BigInt(p.amount),
      recipient: p.recipient_token,
      state: p.state,
      resultSignature: p.result_signature,
      attempts: attempts.map((a) => ({ signature: a.signature, status: a.status })),
    });
    for (const t of await connection.getSignaturesForAddress(new PublicKey(p.op_pda), { limit: 1000 }, 'confirmed'))
      opTransactions.push({
        opId: p.op_pda,
        signature: t.signature,
        err: t.err === null ? null : (customErrorCode(t.err) ?? -1),
      });
    recipientBalances.set(p.recipient_token, await tokenBalance(connection, p.recipient_token));
  }
  const invoices = await q<{
    id: string;
    expected_amount: string;
    credited_amount: string;
    status: string;
    deposit_address: string;
  }>('SELECT id, expected_amount::text, credited_amount::text, status, deposit_address FROM invoices');
  const deposits = new Set(invoices.map((i) => i.deposit_address));
  const receiptKey = `r.signature || '/' || r.ix_index || '/' || r.inner_index`;
  return {
    cluster: CHAOS_CLUSTER,
    payouts,
    opTransactions,
    recipientBalances,
    transfers: await chainTransfers(s, deposits),
    receipts: (
      await q<{ key: string; amount: string; invoice_id: string | null }>(
        `SELECT ${receiptKey} AS key, r.amount::text, r.invoice_id FROM receipts r WHERE r.cluster = $1`,
        [CHAOS_CLUSTER],
      )
    ).map((r) => ({ key: r.key, amount: BigInt(r.amount), invoiceId: r.invoice_id })),
    invoices: invoices.map((i) => ({
      id: i.id,
      expected: BigInt(i.expected_amount),
      credited: BigInt(i.credited_amount),
      status: i.status,
    })),
    exceptions: (
      await q<{ key: string; kind: string; amount: string; invoice_id: string | null }>(
        `SELECT ${receiptKey} AS key, e.kind::text, e.amount::text, e.invoice_id FROM exceptions e JOIN receipts r ON r.id = e.receipt_id`,
      )
    ).map((x) => ({ receipt: x.key, kind: x.kind, amount: BigInt(x.amount), invoiceId: x.invoice_id })),
    fulfilments: (await q<{ invoice_id: string; id: string }>('SELECT invoice_id, id FROM fulfilments')).map((f) => ({
      invoiceId: f.invoice_id,
      id: f.id,
    })),
    outbox: (
      await q<{ fulfilment_id: string; invoice_id: string; state: string }>(
        'SELECT o.fulfilment_id, f.invoice_id, o.state::text FROM outbox o JOIN fulfilments f ON f.id = o.fulfilment_id',
      )
    ).map((o) => ({ fulfilmentId: o.fulfilment_id, invoiceId: o.invoice_id, state: o.state })),
    merchant: {
      applied: [...s.endpoint.applied].map(([k, invoiceId]) => ({ key: k, invoiceId })),
      requests: s.endpoint.requests
        .filter((r) => r.idempotencyKey !== null && r.invoiceId !== null)
        .map((r) => ({ key: r.idempotencyKey!, invoiceId: r.invoiceId! })),
    },
    counters: (
      await q<{ source: string; delivered: string; inserted: string; duplicates: string }>(
        'SELECT source::text, delivered::text, inserted::text, duplicates::text FROM receipt_delivery_counts WHERE cluster = $1',
        [CHAOS_CLUSTER],
      )
    ).map((c) => ({
      source: c.source,
      delivered: Number(c.delivered),
      inserted: Number(c.inserted),
      duplicates: Number(c.duplicates),
    })),
    refunds: (
      await q<{ key: string; kind: string; amount: string; payout_id: string }>(
        `SELECT ${receiptKey} AS key, e.kind::text, e.amount::text, x.payout_id::text
           FROM exception_resolutions x JOIN exceptions e ON e.id = x.exception_id JOIN receipts r ON r.id = e.receipt_id
          WHERE x.resolution = 'refund'`,
      )
    ).map((x) => ({ receipt: x.key, kind: x.kind, amount: BigInt(x.amount), payoutRow: x.payout_id })),
  };
}
