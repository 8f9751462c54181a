// The subscription set of one socket: one logsSubscribe per watched address and commitment, the node's
// subscription ids mapped back to (address, commitment) as their answers are read, so a notification names the
// commitment it was sent at; an address dropped is unsubscribed, and its notifications are no longer taken.
import type { SocketRpc } from './ws-rpc';
import { logsSubscribeRequest, logsUnsubscribeRequest, type WsCommitment } from './ws-plan';
import { OncepayError, RPC_CODES } from '../../common/errors';

export interface SubscriptionSet {
  /** Subscribes `address` at every commitment; resolves once the node answered each with its subscription id. */
  subscribe(address: string): Promise<void>;
  /** Forgets `address` at once (its notifications are dropped from now on), then unsubscribes it. */
  unsubscribe(address: string): Promise<void>;
  /** The commitment a notification of subscription `sub` was sent at (undefined: not one of ours, or dropped). */
  commitmentOf(sub: number): WsCommitment | undefined;
  /** Whether `address` is subscribed (its subscribe answered, not dropped since). */
  has(address: string): boolean;
}

export function createSubscriptionSet(
  rpc: Pick<SocketRpc, 'request'>,
  commitments: readonly WsCommitment[],
  onCount: (subscribed: number) => void = () => undefined,
): SubscriptionSet {
  const subs = new Map<number, { address: string; commitment: WsCommitment }>();
  const byAddress = new Map<string, number[]>();

  function subscribeAt(address: string, commitment: WsCommitment): Promise<number> {
    const mapped = (result: unknown): void => {
      if (typeof result !== 'number')
        throw new OncepayError(
          RPC_CODES.MALFORMED_RESPONSE,
          `logsSubscribe answered ${JSON.stringify(result)}, not a subscription id`,
        );
      subs.set(result, { address, commitment });
    };
    return rpc.request((id) => logsSubscribeRequest(id, address, commitment), mapped) as Promise<number>;
  }

  return {
    async subscribe(address) {
      const ids = await Promise.all(commitments.map((commitment) => subscribeAt(address, commitment)));
      byAddress.set(address, ids);
      onCount(byAddress.size);
    },
    async unsubscribe(address) {
      const ids = byAddress.get(address) ?? [];
      byAddress.delete(address);
      onCount(byAddress.size);
      for (const sub of ids) subs.delete(sub);
      await Promise.all(ids.map((sub) => rpc.request((id) => logsUnsubscribeRequest(id, sub))));
    },
    commitmentOf: (sub) => subs.get(sub)?.commitment,
    has: (address) => byAddress.has(address),
  };
}
