// The checkpoint settler. A node notifies only what it executes after it has applied a subscription (it collects
// a transaction's logs for the subscribed addresses as it executes it), and what it executed just before is final
// only some slots later (32 on solana-test-validator): the catch-up made right after subscribing cannot list it. So
// each subscribed set of addresses settles: the source waits for a slot notification (same socket, after the
// logsSubscribe answers, so the node has applied them; a node that refuses slotSubscribe is watched over HTTP
// instead, for SETTLE_SLOTS_BY_HTTP processed slots) and reads the processed slot U; once the finalized slot reaches
// U it catches those addresses up once more from the finalized slot S read after subscribing, + 1 (minContextSlot
// U), and until that is applied the checkpoint stays at S. The pure bookkeeping is ws-settling.ts.
import { sleep } from '../../common/sleep';
import { type RpcClient } from '../rpc';
import type { SessionScope } from './session-scope';
import type { SubscriptionSet } from './ws-subscriptions';
import { createSettling, createSlotWatch } from './ws-settling';

/**
 * Without slot notifications (a node that refuses slotSubscribe), how many processed slots past the one read after
 * the logsSubscribe answers stand for "the node has applied them": over HTTP nothing orders the node's pubsub thread
 * against its banks, so a margin (~3 s at 400 ms slots) replaces the proof a notification on the socket gives.
 */
export const SETTLE_SLOTS_BY_HTTP = 8;
const SLOT_POLL_MS = 100;

export interface SettlerDeps {
  rpc: Pick<RpcClient, 'getSlot'>;
  scope: Pick<SessionScope, 'signal' | 'guard'>;
  subscriptions: Pick<SubscriptionSet, 'subscribe' | 'has'>;
  /** Catches `addresses` up from slot `from` (through the apply queue), from a node at `minContextSlot` or past. */
  catchUp(addresses: readonly string[], from: number, minContextSlot?: number): Promise<void>;
}

export interface Settler {
  /** A slot notification was read on the socket. */
  heard(slot: number): void;
  /** Whether the node notifies its slots on this socket (else its processed slot over HTTP stands for them). */
  slotsOnSocket: boolean;
  /**
   * Subscribes `addresses`, catches them up from `from` (null: none, live only) to the finalized slot read after
   * the subscriptions, which it returns, and leaves them settling.
   */
  follow(addresses: readonly string[], from: number | null): Promise<number>;
  /** The settling sets due at `finalized` caught up from their hold (those still subscribed), and done. */
  settle(finalized: number): Promise<void>;
  /** The checkpoint `mark` may move to now. */
  held(mark: number): number;
}

export function createSettler(d: SettlerDeps): Settler {
  const { guard, signal } = d.scope;
  const slots = createSlotWatch();
  const settling = createSettling();
  const processed = () => guard(d.rpc.getSlot('processed', { signal }));

  /** Resolves once the node's processed slot (over HTTP) is above `above`. */
  async function processedAbove(above: number): Promise<void> {
    while ((await processed()) <= above) await sleep(SLOT_POLL_MS, signal);
  }

  const settler: Settler = {
    heard: slots.heard,
    slotsOnSocket: true,
    /**
     * `until`: the last slot the node may have executed without the subscriptions answered so far: a slot it began
     * after we read P (the processed slot, read after their answers) is notified after them, so once one is
     * notified they are applied, and every slot after the processed one read then collects their logs.
     */
    async follow(addresses, from) {
      const set = settling.add(addresses, from);
      await guard(Promise.all(addresses.map((a) => d.subscriptions.subscribe(a))));
      const final = await guard(d.rpc.getSlot('finalized', { signal }));
      if (from !== null) await guard(d.catchUp(addresses, from));
      set.hold = final;
      const p = await processed();
      if (settler.slotsOnSocket) await guard(slots.above(p + 1));
      else await processedAbove(p + SETTLE_SLOTS_BY_HTTP);
      set.until = await processed();
      return final;
    },
    async settle(finalized) {
      for (const set of settling.due(finalized)) {
        const still = set.addresses.filter((a) => d.subscriptions.has(a));
        await guard(d.catchUp(still, set.hold + 1, set.until));
        settling.done(set);
      }
    },
    held: settling.held,
  };
  return settler;
}
