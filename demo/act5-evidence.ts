// Act 5 (I/O half): read back what happened from independent places — the chain over JSON-RPC, the database,
// the merchant endpoint's request log — into plain evidence. The checks themselves are pure (invariants.ts).
import bs58 from 'bs58';
import { Connection, PublicKey } from '@solana/web3.js';
import type { Pool } from 'pg';
import { decodeOpAccount } from '../app/payout/program';
import { getPayout } from '../app/payout/store';
import { World } from './act1-merchant-and-payments';
import type { IndexingEvidence } from './act2-indexing';
import { CLUSTER } from './act2-indexing';
import type { FulfilmentEvidence } from './act3-fulfilment';
import { FAIL_ONCE_INVOICE } from './act3-fulfilment';
import type { PayoutEvidence } from './act4-payouts';
import type { DemoEvidence, InvoiceEvidence, PayoutEvidenceRow } from './evidence';
import { tokenBalance } from '../testkit/cluster';
import { OncepayError, DEMO_CODES } from '../common/errors';

const TOKEN_PROGRAMS = new Set([
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PnBqCQJ3Lc5Pu',
]);
const TRANSFER = 3;
const TRANSFER_CHECKED = 12;

interface RawTx {
  meta: { err: unknown } | null;
  transaction: { message: { accountKeys: string[]; instructions: Array<{ programIdIndex: number; data: string }> } };
}

async function rpcCall<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const j = (await res.json()) as { result: T; error?: { message: string } };
  if (j.error) throw new OncepayError(DEMO_CODES.UNEXPECTED_ANSWER, `${method}: ${j.error.message}`);
  return j.result;
}

/** Token transfer instructions at the top level of a transaction, counted from its raw bytes as the node returns them. */
function countTransfers(tx: RawTx): number {
  const keys = tx.transaction.message.accountKeys;
  return tx.transaction.message.instructions.filter((ix) => {
    if (!TOKEN_PROGRAMS.has(keys[ix.programIdIndex])) return false;
    const tag = bs58.decode(ix.data)[0];
    return tag === TRANSFER || tag === TRANSFER_CHECKED;
  }).length;
}

export interface EvidenceDeps {
  world: World;
  rpcUrl: string;
  db: Pool;
  indexing: IndexingEvidence;
  fulfilment: FulfilmentEvidence;
  payouts: PayoutEvidence;
}

/** The chain: each customer transaction as the node returns it at finalized, and its token transfers. */
async function chainPaymentsOf(deps: EvidenceDeps): Promise<DemoEvidence['chainPayments']> {
  const chainPayments: DemoEvidence['chainPayments'] = [];
  for (const p of deps.world.payments) {
    const tx = await rpcCall<RawTx | null>(deps.rpcUrl, 'getTransaction', [
      p.signature,
      { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 },
    ]);
    chainPayments.push({
      signature: p.signature,
      found: tx !== null,
      err: tx?.meta?.err ?? null,
      transfers: tx ? countTransfers(tx) : 0,
    });
  }
  return chainPayments;
}

/** The database: receipt rows per signature and the delivery counts per source. */
async function receiptsOf(
  db: Pool,
): Promise<Pick<DemoEvidence, 'receiptsPerSignature' | 'receiptRows' | 'deliveriesBySource'>> {
  const receipts = await db.query<{ signature: string; n: number }>(
    'SELECT signature, count(*)::int AS n FROM receipts WHERE cluster = $1 GROUP BY signature',
    [CLUSTER],
  );
  const receiptsPerSignature: Record<string, number> = {};
  for (const r of receipts.rows) receiptsPerSignature[r.signature] = r.n;
  const receiptRows = receipts.rows.reduce((n, r) => n + r.n, 0);
  const counts = await db.query(
    'SELECT source::text, delivered::int, inserted::int, duplicates::int FROM receipt_delivery_counts WHERE cluster = $1 ORDER BY source',
    [CLUSTER],
  );
  return {
    receiptsPerSignature,
    receiptRows,
    deliveriesBySource: counts.rows.map((r) => ({
      source: r.source,
      delivered: r.delivered,
      inserted: r.inserted,
      duplicates: r.duplicates,
    })),
  };
}

/** One invoice: its deposit account on chain, its rows in the database, the requests the merchant endpoint saw. */
async function invoiceOf(deps: EvidenceDeps, inv: World['invoices'][number]): Promise<InvoiceEvidence> {
  const { world, db, fulfilment } = deps;
  const row = (
    await db.query('SELECT credited_amount::text AS credited, status::text FROM invoices WHERE id = $1', [inv.id])
  ).rows[0];
  const n = (await db.query('SELECT count(*)::int AS n FROM receipts WHERE invoice_id = $1', [inv.id])).rows[0]
    .n as number;
  const exc = await db.query(
    'SELECT e.kind::text, e.amount::text, r.signature FROM exceptions e JOIN receipts r ON r.id = e.receipt_id WHERE e.invoice_id = $1 ORDER BY e.id',
    [inv.id],
  );
  const ful = await db.query(
    'SELECT f.id, o.state::text FROM fulfilments f LEFT JOIN outbox o ON o.fulfilment_id = f.id WHERE f.invoice_id = $1',
    [inv.id],
  );
  const seen = fulfilment.endpoint.requests.filter((r) => r.invoiceId === inv.id);
  const sent = world.payments
    .flatMap((p) => p.transfers)
    .filter((t) => t.invoiceId === inv.id)
    .reduce((s, t) => s + t.amount, 0n);
  return {
    id: inv.id,
    expected: inv.expected.toString(),
    paidOnChain: (await tokenBalance(world.connection, inv.depositAccount)).toString(),
    sentByCustomers: sent.toString(),
    credited: row?.credited ?? '0',
    status: row?.status ?? 'missing',
    receipts: n,
    exceptions: exc.rows.map((x) => ({ kind: x.kind, amount: x.amount, signature: x.signature })),
    fulfilmentIds: ful.rows.map((f) => f.id),
    outboxStates: ful.rows.map((f) => f.state ?? 'missing'),
    deliveries: seen.map((r) => ({
      key: r.idempotencyKey,
      status: r.status,
      outcome: r.outcome,
      signatureValid: r.signatureValid,
    })),
    applied: [...fulfilment.endpoint.applied.values()].filter((id) => id === inv.id).length,
  };
}

/** One payout run: its row, its op account and the transactions on its op PDA, the recipient's balance. */
async function payoutOf(deps: EvidenceDeps, run: PayoutEvidence['runs'][number]): Promise<PayoutEvidenceRow> {
  const connection: Connection = deps.world.connection;
  const row = (await getPayout(deps.db, run.rowId))!;
  const info = await connection.getAccountInfo(new PublicKey(row.opPda), 'confirmed');
  const op = info && info.owner.equals(deps.world.programId) ? decodeOpAccount(info.data) : null;
  const sigs = await connection.getSignaturesForAddress(new PublicKey(row.opPda), { limit: 100 }, 'confirmed');
  return {
    payoutId: run.payoutId,
    amount: row.amount.toString(),
    recipient: row.recipientToken,
    state: row.state,
    signature: row.resultSignature,
    opPda: row.opPda,
    fault: run.fault,
    attempts: run.attempts,
    workerSignatures: run.workers.map((w) => w?.signature ?? null),
    opAccount: op ? { amount: op.amount.toString(), recipient: op.recipient, mint: op.mint } : null,
    successfulOpTransactions: sigs.filter((s) => s.err === null).map((s) => s.signature),
    recipientBalance: (await tokenBalance(connection, row.recipientToken)).toString(),
  };
}

/** What act 2 recorded about itself: the second payment, the crash, the webhook deliveries. */
function indexingOf(indexing: IndexingEvidence): Pick<DemoEvidence, 'secondPayment' | 'crash' | 'webhook'> {
  return {
    secondPayment: {
      invoiceId: 'INV-1001',
      signature: indexing.secondPayment.signature,
      amount: indexing.secondPayment.transfers[0].amount.toString(),
    },
    crash: {
      failpoint: indexing.crash.failpoint,
      killedBy: indexing.crash.killedBy,
      receiptsAfterKill: indexing.crash.receiptsAfterKill,
      checkpointBefore: indexing.crash.checkpointBefore,
      checkpointAfterKill: indexing.crash.checkpointAfterKill,
      restartExitCode: indexing.crash.restartExitCode,
      receiptsAfterRestart: indexing.crash.receiptsAfterRestart,
    },
    webhook: indexing.webhook.map((w) => ({
      eventId: w.eventId,
      status: w.status,
      duplicateEvent: w.duplicateEvent,
      inserted: w.inserted,
      duplicates: w.duplicates,
    })),
  };
}

export async function gatherEvidence(deps: EvidenceDeps): Promise<DemoEvidence> {
  const { world, db } = deps;
  const chainPayments = await chainPaymentsOf(deps);
  const receipts = await receiptsOf(db);
  const invoices: InvoiceEvidence[] = [];
  for (const inv of world.invoices) invoices.push(await invoiceOf(deps, inv));
  const payoutRows: PayoutEvidenceRow[] = [];
  for (const run of deps.payouts.runs) payoutRows.push(await payoutOf(deps, run));
  const rows = (await db.query('SELECT count(*)::int AS n FROM payouts')).rows[0].n as number;
  const { secondPayment, crash, webhook } = indexingOf(deps.indexing);

  return {
    cluster: CLUSTER,
    chainPayments,
    receiptRows: receipts.receiptRows,
    receiptsPerSignature: receipts.receiptsPerSignature,
    deliveriesBySource: receipts.deliveriesBySource,
    invoices,
    secondPayment,
    failOnceInvoice: FAIL_ONCE_INVOICE,
    crash,
    webhook,
    api: deps.payouts.apiCalls,
    payoutRows: rows,
    payouts: payoutRows,
    vault: {
      funded: world.vaultFunded.toString(),
      balance: (await tokenBalance(world.connection, world.vault)).toString(),
    },
  };
}
