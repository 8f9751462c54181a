// The INSERT path: the candidates go in by one INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING, whose
// RETURNING lists the rows this transaction inserted (their position in the batch, their new id): only those may be
// credited. When some were in the ledger already (inserted by another transaction since the probe, or not probed),
// the match is made again on what this one did insert.
import type { PoolClient } from 'pg';
import { rows } from '../../db/sql';
import type { Receipt } from '../decode/receipt';
import type { InvoiceState } from '../match/types';
import { type CreditRows, creditRows, type Planning, rematchInserted } from './credits';
import * as q from './queries';
import type { ReceiptSource } from './types';

/** What an insert path answers: the receipts this transaction inserted, their credits, and the ids it needs. */
export interface Inserted {
  inserted: Receipt[];
  credits: CreditRows;
  /** The row id of each inserted receipt that raises an exception. */
  idOf: (r: Receipt) => string;
}

/** `chain` (chain order, no repeats, matched by `planning` against the locked `invoices`) by INSERT … ON CONFLICT. */
export async function insertByStatement(
  client: PoolClient,
  cluster: string,
  source: ReceiptSource,
  chain: Receipt[],
  planning: Planning,
  invoices: InvoiceState[],
): Promise<Inserted> {
  let plan = planning.plan();
  const invoiceIds = planning.invoiceIds;
  const insertedRows = await rows<{ ord: number; id: string }>(
    client,
    q.insertReceipts(cluster, source, columns(chain, invoiceIds)),
  );
  const ids = new Map<Receipt, string>();
  for (const row of insertedRows) ids.set(chain[row.ord - 1], row.id);
  const idOf = (r: Receipt): string => ids.get(r)!;
  const inserted = ids.size === chain.length ? chain : chain.filter((r) => ids.has(r));
  if (inserted.length < chain.length) {
    const at = new Map(chain.map((r, i) => [r, i]));
    const plannedOf = (r: Receipt) => invoiceIds[at.get(r)!];
    plan = await rematchInserted(client, inserted, invoices, plannedOf, idOf);
  }
  return { inserted, credits: creditRows(inserted, plan), idOf };
}

/** The batch as statement columns, in one pass (the receipt's planned invoice id from the match). Pure. */
export function columns(batch: readonly Receipt[], invoiceIds: readonly (string | null)[]): q.ReceiptColumns {
  const n = batch.length;
  const c: q.ReceiptColumns = {
    invoiceId: new Array(n),
    signature: new Array(n),
    ixIndex: new Array(n),
    innerIndex: new Array(n),
    slot: new Array(n),
    blockTime: new Array(n),
    program: new Array(n),
    kind: new Array(n),
    mint: new Array(n),
    source: new Array(n),
    destination: new Array(n),
    destinationOwner: new Array(n),
    amount: new Array(n),
  };
  for (let i = 0; i < n; i++) {
    const r = batch[i];
    c.invoiceId[i] = invoiceIds[i];
    c.signature[i] = r.signature;
    c.ixIndex[i] = r.ixIndex;
    c.innerIndex[i] = r.innerIndex;
    c.slot[i] = r.slot === null || r.slot === undefined ? null : r.slot.toString();
    c.blockTime[i] = r.blockTime === null || r.blockTime === undefined ? null : String(r.blockTime);
    c.program[i] = r.program;
    c.kind[i] = r.kind;
    c.mint[i] = r.mint;
    c.source[i] = r.source;
    c.destination[i] = r.destination;
    c.destinationOwner[i] = r.destinationOwner ?? null;
    c.amount[i] = r.amount.toString();
  }
  return c;
}
