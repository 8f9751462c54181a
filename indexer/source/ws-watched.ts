// The watched set of one session: the addresses read from the database (deposit addresses, their ATAs, reference
// keys), subscribed once at the start, then read again every refreshMs: new ones subscribed and caught up from the
// checkpoint (a refusal or a failed catch-up ends the session: the next one subscribes and catches up all), gone
// ones unsubscribed.
import type { Logger } from 'pino';
import type { SessionScope } from './session-scope';
import { diffWatched } from './ws-plan';
import type { SubscriptionSet } from './ws-subscriptions';

export interface WatchedDeps {
  watched: () => Promise<string[]>;
  subscriptions: Pick<SubscriptionSet, 'unsubscribe'>;
  /** Subscribes new addresses and catches them up from `from` (ws-settler.ts follow). */
  follow(addresses: readonly string[], from: number | null): Promise<number>;
  /** Where a new address's catch-up starts (from the checkpoint as it is then). */
  catchUpFrom(): number | null;
  scope: Pick<SessionScope, 'signal' | 'fail' | 'guard'>;
  log?: Logger;
}

export interface WatchedSet {
  /** The first set, sorted, without repeats (refreshes wait until `started()`). */
  initial(): Promise<string[]>;
  /** The first subscriptions are made: refreshes may run. */
  started(): void;
  /** Reads the set again and follows the change; rejects (and ends the session) when a new address fails. */
  refresh(): Promise<void>;
  /** A timer's turn: refreshes unless one is running, the first subscriptions are, or the session ended. */
  tick(): void;
}

export function createWatchedSet(d: WatchedDeps): WatchedSet {
  let current: string[] = [];
  let refreshing = true; // until the first subscriptions are made
  const set: WatchedSet = {
    async initial() {
      current = [...new Set(await d.scope.guard(d.watched()))].sort();
      return current;
    },
    started() {
      refreshing = false;
    },
    async refresh() {
      const next = [...new Set(await d.watched())];
      const change = diffWatched(current, next);
      if (change.subscribe.length === 0 && change.unsubscribe.length === 0) return;
      await Promise.all(change.unsubscribe.map((a) => d.subscriptions.unsubscribe(a)));
      current = current.filter((a) => !change.unsubscribe.includes(a));
      if (change.subscribe.length > 0) {
        await d.follow(change.subscribe, d.catchUpFrom()).catch((e) => {
          d.scope.fail(e);
          throw e;
        });
      }
      current.push(...change.subscribe);
      d.log?.info(
        { subscribed: change.subscribe.length, dropped: change.unsubscribe.length },
        'ws subscriptions updated',
      );
    },
    tick() {
      if (refreshing || d.scope.signal.aborted) return;
      refreshing = true;
      set
        .refresh()
        .catch((e) => {
          if (!d.scope.signal.aborted) d.log?.warn({ err: (e as Error).message }, 'could not update the subscriptions');
        })
        .finally(() => (refreshing = false));
    },
  };
  return set;
}
