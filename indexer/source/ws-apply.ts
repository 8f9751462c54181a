// What the websocket source does with a batch of observed signatures: each is fetched with getTransaction (at the
// commitment it was observed at, a few in flight, asked again with backoff while the node does not return it yet),
// decoded, and its receipts applied — finalized ones through the ledger (source 'ws'), confirmed ones kept as
// provisional rows (subscription-sink.ts). A signature the node never returns is given up: the scanner credits what exists.
import type { Logger } from 'pino';
import { decodeTransaction, type Receipt } from '../decode';
import { backoffDelay } from '../../common/backoff';
import { sleep } from '../../common/sleep';
import { type RpcClient } from '../rpc';
import type { createSubscriptionSink } from './subscription-sink';
import type { WsCommitment, WsOptions } from './ws-plan';

/** A signature as observed: notified, or listed by a catch-up (finalized). */
export interface Observed {
  signature: string;
  slot: number;
  commitment: WsCommitment;
}

/** What the applier counts (WsStats). */
export interface ApplyCounts {
  transactions: number;
  notFound: number;
  provisional: number;
}

export interface ObservedApplierDeps {
  rpc: Pick<RpcClient, 'getTransaction'>;
  sink: ReturnType<typeof createSubscriptionSink>;
  stats: ApplyCounts;
  log?: Logger;
  options: Pick<WsOptions, 'cluster' | 'concurrency' | 'fetchAttempts' | 'backoff'>;
}

/** Each signature once per commitment, the first observation kept (pure). */
export function uniqueObserved(batch: readonly Observed[]): Observed[] {
  const seen = new Set<string>();
  return batch.filter((x) => {
    const k = `${x.commitment}:${x.signature}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The slot a batch of finalized observations is applied at (onApplied names it): the highest; null: none (pure). */
export function finalSlot(batch: readonly Observed[]): number | null {
  const finals = batch.filter((x) => x.commitment === 'finalized');
  return finals.length === 0 ? null : Math.max(...finals.map((x) => x.slot));
}

/** A function applying one batch of observations; its RPC calls end when `signal` aborts. */
export function createObservedApplier(d: ObservedApplierDeps, signal: AbortSignal) {
  const o = d.options;

  async function fetchTransaction(x: Observed): Promise<Record<string, unknown> | null> {
    for (let n = 1; ; n++) {
      const tx = await d.rpc.getTransaction(x.signature, x.commitment, { signal });
      if (tx) return tx;
      if (n >= o.fetchAttempts) return null;
      await sleep(backoffDelay(n, o.backoff, Math.random()), signal);
    }
  }

  return async function applyObserved(batch: Observed[]): Promise<void> {
    const unique = uniqueObserved(batch);
    const final: Receipt[] = [];
    const provisional: Array<{ slot: number; receipt: Receipt }> = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < unique.length) {
        const x = unique[next++];
        const tx = await fetchTransaction(x);
        if (tx === null) {
          d.stats.notFound++;
          d.log?.warn(
            { signature: x.signature, commitment: x.commitment },
            'notified transaction not returned by getTransaction; the scanner covers it',
          );
          continue;
        }
        d.stats.transactions++;
        const slot = Number(tx.slot ?? x.slot);
        const at = { signature: x.signature, slot };
        const decode = (): Receipt[] => decodeTransaction(tx, { cluster: o.cluster });
        if (x.commitment === 'finalized') final.push(...d.sink.decode(decode, at));
        else provisional.push(...d.sink.decode(decode, at, { receipts: 0 }).map((receipt) => ({ slot, receipt })));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, unique.length)) }, worker));
    if (provisional.length > 0) {
      await d.sink.provisional(provisional);
      d.stats.provisional += provisional.length;
    }
    const slot = finalSlot(unique);
    if (slot !== null) await d.sink.apply(final, { slot });
  };
}
