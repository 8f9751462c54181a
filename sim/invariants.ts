// The invariants of docs/guarantees.md, as checks over Evidence (pure). Each returns what broke, naming the
// payout, op, transfer or invoice; an empty list means it holds. The model checks them after every schedule, the
// chaos runs after every seed. `eventually` invariants (a payout paid, a transfer credited, a fulfilment applied)
// are checked once the faults have stopped and the run has quiesced.
import { fulfilmentOpId } from '../indexer/ledger/fulfilment';
import type { Evidence } from './evidence';

export interface Invariant {
  name: string;
  /** The promise, in one sentence (as docs/guarantees.md states it). */
  says: string;
  check(e: Evidence): string[];
}

const CONSUMED = 6000;

const sum = (xs: Iterable<bigint>) => {
  let n = 0n;
  for (const x of xs) n += x;
  return n;
};

function group<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const l = m.get(k);
    if (l) l.push(x);
    else m.set(k, [x]);
  }
  return m;
}

export const INVARIANTS: readonly Invariant[] = [
  {
    name: 'no-op-paid-twice',
    says: 'each op id is executed on chain at most once, and its recipient holds exactly what that one execution paid',
    check(e) {
      const out: string[] = [];
      const byOp = group(e.opTransactions, (t) => t.opId);
      const owed = new Map<string, bigint>();
      for (const p of e.payouts) {
        const paid = (byOp.get(p.opId) ?? []).filter((t) => t.err === null);
        if (paid.length > 1)
          out.push(
            `op ${p.opId} (payout ${p.payoutId}) executed ${paid.length} times: ${paid.map((t) => t.signature).join(', ')}`,
          );
        owed.set(p.recipient, (owed.get(p.recipient) ?? 0n) + (paid.length > 0 ? p.amount : 0n));
      }
      for (const [recipient, want] of owed) {
        const holds = e.recipientBalances.get(recipient) ?? 0n;
        if (holds !== want) out.push(`${recipient} holds ${holds}, its payouts' executions paid ${want}`);
      }
      const byPayoutId = group(e.payouts, (p) => p.payoutId);
      for (const [payoutId, rows] of byPayoutId)
        if (rows.length > 1)
          out.push(`payout id ${payoutId} has ${rows.length} rows (${rows.map((r) => r.id).join(', ')})`);
      return out;
    },
  },
  {
    name: 'op-guard-never-needed',
    says: 'the journal alone keeps each op to one execution: no attempt it signs is refused by the program as already consumed (the op account is the final guard, never the working one)',
    check(e) {
      return e.opTransactions
        .filter((t) => t.err === CONSUMED)
        .map((t) => `attempt ${t.signature} of op ${t.opId} reached the chain after the op was executed (6000)`);
    },
  },
  {
    name: 'sent-attempt-journaled',
    says: 'every attempt on chain was journaled (committed) before it was sent: the journal names every transaction that could pay',
    check(e) {
      const journaled = new Set(e.payouts.flatMap((p) => p.attempts.map((a) => a.signature)));
      return [
        ...(e.sentUnjournaled ?? []).map((s) => `${s} was sent before it was journaled`),
        ...e.opTransactions
          .filter((t) => !journaled.has(t.signature))
          .map((t) => `${t.signature} (op ${t.opId}) is on chain and in no journal`),
      ];
    },
  },
  {
    name: 'funded-payout-eventually-paid',
    says: 'once the faults stop (the merchant unpaused, the vault funded, failed payouts retried by the operator), every payout succeeds, by the one attempt that executed its op, with no attempt left open',
    check(e) {
      const out: string[] = [];
      const byOp = group(e.opTransactions, (t) => t.opId);
      for (const p of e.payouts) {
        const paid = (byOp.get(p.opId) ?? []).filter((t) => t.err === null);
        const open = p.attempts.filter((a) => a.status === 'built' || a.status === 'sent');
        const landed = p.attempts.filter((a) => a.status === 'landed');
        if (p.state !== 'succeeded') out.push(`payout ${p.payoutId} is ${p.state}`);
        else if (paid.length !== 1 || p.resultSignature !== paid[0].signature)
          out.push(
            `payout ${p.payoutId} succeeded by ${p.resultSignature}, the chain paid by ${paid.map((t) => t.signature).join(', ') || 'nothing'}`,
          );
        else if (landed.length !== 1 || landed[0].signature !== p.resultSignature)
          out.push(
            `payout ${p.payoutId}: journal's landed attempts ${landed.map((a) => a.signature).join(', ') || 'none'}, result ${p.resultSignature}`,
          );
        if (open.length > 0)
          out.push(`payout ${p.payoutId} has open attempts: ${open.map((a) => a.signature).join(', ')}`);
      }
      return out;
    },
  },
  {
    name: 'finalized-transfer-credited-once',
    says: 'every finalized transfer to a watched address is one receipt row, and its amount is credited or kept as exceptions exactly once (credited + exceptions = what arrived, per invoice and in total)',
    check(e) {
      const out: string[] = [];
      const rows = new Map(e.receipts.map((r) => [r.key, r]));
      const onChain = new Map(e.transfers.map((t) => [t.key, t]));
      for (const t of e.transfers) {
        if (!t.final || !t.watched) continue;
        const r = rows.get(t.key);
        if (!r) out.push(`transfer ${t.key} (${t.amount}) is final and has no receipt`);
        else if (r.amount !== t.amount) out.push(`receipt ${t.key} holds ${r.amount}, the chain moved ${t.amount}`);
      }
      for (const r of e.receipts) {
        const t = onChain.get(r.key);
        if (!t) out.push(`receipt ${r.key} names no transfer on chain`);
        else if (!t.final) out.push(`receipt ${r.key} is credited from a transfer that is not final`);
      }
      const excByReceipt = group(e.exceptions, (x) => x.receipt);
      for (const [key, xs] of excByReceipt) {
        const r = rows.get(key);
        const total = sum(xs.map((x) => x.amount));
        if (!r) out.push(`exceptions name receipt ${key}, which is not in the ledger`);
        else if (total > r.amount) out.push(`receipt ${key}: exceptions ${total} exceed its amount ${r.amount}`);
      }
      const receiptsOf = group(e.receipts, (r) => r.invoiceId ?? '');
      const excOf = group(e.exceptions, (x) => x.invoiceId ?? '');
      for (const inv of e.invoices) {
        const arrived = sum((receiptsOf.get(inv.id) ?? []).map((r) => r.amount));
        const kept = sum((excOf.get(inv.id) ?? []).map((x) => x.amount));
        if (inv.credited + kept !== arrived)
          out.push(`invoice ${inv.id}: credited ${inv.credited} + exceptions ${kept} ≠ ${arrived} received`);
        if (inv.credited > inv.expected) out.push(`invoice ${inv.id} credited ${inv.credited} of ${inv.expected}`);
        if ((inv.status === 'paid') !== (inv.credited === inv.expected))
          out.push(`invoice ${inv.id} is ${inv.status} with ${inv.credited} of ${inv.expected}`);
      }
      const watchedRows = e.receipts.filter((r) => onChain.get(r.key)?.watched);
      const allArrived = sum(watchedRows.map((r) => r.amount));
      const allKept = sum(e.invoices.map((i) => i.credited)) + sum(e.exceptions.map((x) => x.amount));
      if (allArrived !== allKept)
        out.push(`in total: ${allArrived} received at watched addresses, ${allKept} credited or kept`);
      return out;
    },
  },
  {
    name: 'one-fulfilment-per-paid-invoice',
    says: 'each paid invoice has one fulfilment (its id a function of the invoice id), delivered under that id as Idempotency-Key, and the merchant applied it exactly once; no unpaid invoice is fulfilled',
    check(e) {
      const out: string[] = [];
      const paid = new Set(e.invoices.filter((i) => i.status === 'paid').map((i) => i.id));
      const fulByInvoice = group(e.fulfilments, (f) => f.invoiceId);
      const appliedByInvoice = group(e.merchant.applied, (a) => a.invoiceId);
      for (const id of paid) {
        const f = fulByInvoice.get(id) ?? [];
        if (f.length !== 1) out.push(`paid invoice ${id} has ${f.length} fulfilments`);
        else if (f[0].id !== fulfilmentOpId(id))
          out.push(`invoice ${id}'s fulfilment id ${f[0].id} is not derived from it`);
        const applied = appliedByInvoice.get(id) ?? [];
        if (applied.length !== 1)
          out.push(
            `the merchant applied paid invoice ${id} ${applied.length} times (keys ${applied.map((a) => a.key).join(', ')})`,
          );
        const o = e.outbox.filter((x) => x.invoiceId === id);
        if (o.length !== 1 || o[0].state !== 'delivered')
          out.push(`invoice ${id}'s outbox rows: ${o.map((x) => x.state).join(', ') || 'none'}`);
      }
      for (const f of e.fulfilments)
        if (!paid.has(f.invoiceId)) out.push(`invoice ${f.invoiceId} is fulfilled and not paid`);
      for (const a of e.merchant.applied)
        if (!paid.has(a.invoiceId)) out.push(`the merchant applied ${a.invoiceId}, which is not paid`);
      for (const r of e.merchant.requests)
        if (r.key !== fulfilmentOpId(r.invoiceId)) out.push(`a delivery of ${r.invoiceId} carried the key ${r.key}`);
      return out;
    },
  },
  {
    name: 'one-refund-per-exception',
    says: "an exception is refunded by one payout, ever, whose payout id is the exception's receipt key and whose amount is the exception's",
    check(e) {
      const out: string[] = [];
      const rows = new Map(e.payouts.map((p) => [p.id, p]));
      for (const [key, links] of group(e.refunds, (r) => `${r.receipt}#${r.kind}`))
        if (links.length > 1) out.push(`exception ${key} has ${links.length} refunds`);
      for (const r of e.refunds) {
        const p = rows.get(r.payoutRow);
        const [signature, ix, inner] = r.receipt.split('/');
        if (!p) out.push(`exception ${r.receipt} links to payout ${r.payoutRow}, which does not exist`);
        else if (p.payoutId !== `refund:${e.cluster}:${signature}:${ix}:${inner}` || p.amount !== r.amount)
          out.push(`exception ${r.receipt} (${r.amount}) is refunded by ${p.payoutId} for ${p.amount}`);
      }
      return out;
    },
  },
  {
    name: 'idempotency-key-replays',
    says: 'a payout request repeated under its Idempotency-Key answers the one stored payout; another body under a used key is refused (409 IDEMPOTENCY_CONFLICT), never stored',
    check(e) {
      const out: string[] = [];
      const rows = new Map(e.payouts.map((p) => [p.id, p]));
      for (const [key, answers] of group(e.api ?? [], (a) => a.key)) {
        const ok = answers.filter((a) => a.status >= 200 && a.status < 300);
        const first = ok[0];
        if (!first) continue;
        for (const a of answers) {
          const same = a.payoutId === first.payoutId && a.amount === first.amount;
          if (same && a.rowId !== first.rowId && a.status < 300)
            out.push(`key ${key}: answered payout ${a.rowId} and ${first.rowId}`);
          if (!same && a.status < 300) out.push(`key ${key}: another body was stored (payout ${a.rowId})`);
          if (!same && (a.status !== 409 || a.code !== 'IDEMPOTENCY_CONFLICT'))
            out.push(`key ${key}: another body answered ${a.status} ${a.code}`);
        }
        const row = first.rowId === null ? undefined : rows.get(first.rowId);
        if (!row || row.payoutId !== first.payoutId)
          out.push(`key ${key}: payout ${first.rowId} is not ${first.payoutId}`);
      }
      return out;
    },
  },
  {
    name: 'counters-consistent',
    says: 'per source, delivered = inserted + duplicates, and the sources inserted as many receipts as the ledger holds',
    check(e) {
      const out: string[] = [];
      for (const c of e.counters)
        if (c.delivered !== c.inserted + c.duplicates)
          out.push(`${c.source}: delivered ${c.delivered} ≠ inserted ${c.inserted} + duplicates ${c.duplicates}`);
      const inserted = e.counters.reduce((n, c) => n + c.inserted, 0);
      if (inserted !== e.receipts.length)
        out.push(`the sources inserted ${inserted} receipts, the ledger holds ${e.receipts.length}`);
      return out;
    },
  },
  {
    name: 'checkpoint-covers-delivered',
    says: "a source's checkpoint passes a final slot only once that source handed every transfer it should see there to the ledger",
    check(e) {
      return (e.checkpointGaps ?? []).flatMap((g) =>
        g.missing.map((k) => `${g.source}'s checkpoint ${g.checkpoint} passed transfer ${k}, which it never delivered`),
      );
    },
  },
];

export const INVARIANT_NAMES = INVARIANTS.map((i) => i.name);

/** Every broken invariant: "name: what broke". */
export function checkInvariants(e: Evidence): string[] {
  return INVARIANTS.flatMap((i) => i.check(e).map((p) => `${i.name}: ${p}`));
}
