// A small recorded chain for the source tests: blocks of SPL transferChecked payments to one deposit owner,
// some empty/skipped slots, and the totals one delivery of it must produce in the ledger.
import { expect } from 'chai';
import type { Pool } from 'pg';
import { blockAt, randomAddress, ReplayRpc, transferCheckedTx } from '../../../testkit/replay-rpc';
import { createLedger } from '../../../indexer/ledger';

export interface Chain {
  mint: string;
  owner: string;
  invoiceId: string;
  /** slot → the block's transactions (json wire format). */
  blocks: Map<number, unknown>;
  receipts: number;
  amount: bigint;
}

/** Blocks at slots [from, to] except every `skipEvery`-th slot (no block there); `perBlock` payments each. */
export function buildChain(opts: {
  from: number;
  to: number;
  perBlock?: number;
  skipEvery?: number;
  owner?: string;
  mint?: string;
  seed?: number;
}): Chain {
  const owner = opts.owner ?? randomAddress();
  const mint = opts.mint ?? randomAddress();
  const blocks = new Map<number, unknown>();
  let receipts = 0;
  let amount = 0n;
  for (let s = opts.from; s <= opts.to; s++) {
    if (opts.skipEvery && s % opts.skipEvery === 0) continue;
    const txs = [];
    for (let k = 0; k < (opts.perBlock ?? 2); k++) {
      const a = BigInt(1000 + s * 10 + k);
      txs.push(transferCheckedTx({ amount: a, mint, destinationOwner: owner, version: k % 2 === 0 ? 'legacy' : 0 }));
      receipts++;
      amount += a;
    }
    blocks.set(s, blockAt(s, txs));
  }
  return { mint, owner, invoiceId: `inv-${owner.slice(0, 8)}`, blocks, receipts, amount };
}

export function loadChain(rpc: ReplayRpc, chain: Chain, tip: number): void {
  for (const [s, b] of chain.blocks) rpc.setBlock(s, b);
  rpc.setTip({ finalized: tip, confirmed: tip + 5 });
}

/** One invoice expecting exactly the chain's total: any double credit would show as an overpayment exception. */
export async function createChainInvoice(pool: Pool, chain: Chain, expected = chain.amount): Promise<void> {
  await createLedger({ db: pool }).createInvoice({
    id: chain.invoiceId,
    mint: chain.mint,
    expectedAmount: expected,
    depositAddress: chain.owner,
  });
}

export interface Totals {
  receipts: number;
  amount: bigint;
  credited: bigint;
  exceptions: number;
  fulfilments: number;
  duplicates: Record<string, number>;
  checkpoints: Record<string, number>;
}

export async function totals(pool: Pool, cluster: string): Promise<Totals> {
  const r = await pool.query(
    `SELECT count(*)::int AS n, coalesce(sum(amount), 0)::text AS amount FROM receipts WHERE cluster = $1`,
    [cluster],
  );
  const inv = await pool.query(`SELECT coalesce(sum(credited_amount), 0)::text AS credited FROM invoices`);
  const ex = await pool.query(`SELECT count(*)::int AS n FROM exceptions`);
  const f = await pool.query(`SELECT count(*)::int AS n FROM fulfilments`);
  const d = await pool.query(`SELECT source::text, duplicates::int FROM receipt_delivery_counts WHERE cluster = $1`, [
    cluster,
  ]);
  const c = await pool.query(`SELECT source::text, slot::text FROM checkpoints WHERE cluster = $1`, [cluster]);
  return {
    receipts: r.rows[0].n,
    amount: BigInt(r.rows[0].amount),
    credited: BigInt(inv.rows[0].credited),
    exceptions: ex.rows[0].n,
    fulfilments: f.rows[0].n,
    duplicates: Object.fromEntries(d.rows.map((x) => [x.source, x.duplicates])),
    checkpoints: Object.fromEntries(c.rows.map((x) => [x.source, Number(x.slot)])),
  };
}

/** The ledger holds exactly one delivery of `chain` (paid to its one invoice): no receipt lost, none credited twice. */
export async function expectExactTotals(pool: Pool, cluster: string, chain: Chain): Promise<Totals> {
  const t = await totals(pool, cluster);
  expect(t.receipts).to.equal(chain.receipts);
  expect(t.amount).to.equal(chain.amount);
  expect(t.credited).to.equal(chain.amount);
  expect(t.exceptions).to.equal(0);
  expect(t.fulfilments).to.equal(1);
  return t;
}
