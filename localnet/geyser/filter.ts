// A Yellowstone SubscribeRequest → the localnet's matcher: which transactions and slot updates a stream gets.
// Supported: transactions (vote, failed, signature, account_include / exclude / required), slots
// (filter_by_commitment), commitment, ping, from_slot. Anything else is refused by name rather than ignored.
import { PublicKey } from '@solana/web3.js';
import type { SubscribeRequest } from '@triton-one/yellowstone-grpc';
import type { Commitment } from '../types';

export interface TxFilter {
  name: string;
  vote: boolean | undefined;
  failed: boolean | undefined;
  signature: string | undefined;
  include: Set<string>;
  exclude: Set<string>;
  required: string[];
}

export interface StreamFilter {
  commitment: Commitment;
  transactions: TxFilter[];
  /** Slot filter names; `byCommitment` = only the stream's own commitment level. */
  slots: Array<{ name: string; byCommitment: boolean }>;
}

/** A subscription filter the Yellowstone server refuses, in its words. Not an OncepayError: the server's signal. */
export class FilterError extends Error {}

const COMMITMENTS: Commitment[] = ['processed', 'confirmed', 'finalized'];

function addresses(list: readonly string[], what: string): string[] {
  for (const a of list) {
    try {
      new PublicKey(a);
    } catch {
      throw new FilterError(`failed to create filter: invalid pubkey in ${what}: ${a}`);
    }
  }
  return [...list];
}

export function parseFilter(req: SubscribeRequest): StreamFilter {
  const unsupported = (['accounts', 'transactionsStatus', 'blocks', 'blocksMeta', 'entry'] as const).filter(
    (k) => Object.keys(req[k] ?? {}).length > 0,
  );
  if (unsupported.length > 0)
    throw new FilterError(`localnet serves transactions and slots only; not supported: ${unsupported.join(', ')}`);
  const commitment = COMMITMENTS[req.commitment ?? 0];
  if (commitment === undefined) throw new FilterError(`failed to create filter: unknown commitment ${req.commitment}`);
  const transactions = Object.entries(req.transactions ?? {}).map(([name, f]): TxFilter => {
    if (f.cuckooAccountInclude !== undefined || f.tokenAccounts !== undefined)
      throw new FilterError(`filter ${name}: cuckoo filters and token account expansion are not supported by localnet`);
    return {
      name,
      vote: f.vote,
      failed: f.failed,
      signature: f.signature,
      include: new Set(addresses(f.accountInclude ?? [], 'account_include')),
      exclude: new Set(addresses(f.accountExclude ?? [], 'account_exclude')),
      required: addresses(f.accountRequired ?? [], 'account_required'),
    };
  });
  const slots = Object.entries(req.slots ?? {}).map(([name, f]) => ({
    name,
    byCommitment: f.filterByCommitment === true,
  }));
  return { commitment, transactions, slots };
}

/** Names of the transaction filters a transaction matches (empty: not sent). Localnet has no vote transactions. */
export function matchTransaction(
  f: StreamFilter,
  tx: { signature: string; failed: boolean; keys: readonly string[] },
): string[] {
  const out: string[] = [];
  for (const t of f.transactions) {
    if (t.vote === true) continue;
    if (t.failed !== undefined && t.failed !== tx.failed) continue;
    if (t.signature !== undefined && t.signature !== tx.signature) continue;
    if (t.include.size > 0 && !tx.keys.some((k) => t.include.has(k))) continue;
    if (t.exclude.size > 0 && tx.keys.some((k) => t.exclude.has(k))) continue;
    if (t.required.length > 0 && !t.required.every((k) => tx.keys.includes(k))) continue;
    out.push(t.name);
  }
  return out;
}
