// The watched set of a websocket session (indexer/source/ws-watched.ts), without a node: the first set, then each
// refresh subscribing what is new (caught up from the checkpoint) and dropping what is gone.
import { expect } from 'chai';
import { createSessionScope } from '../../../indexer/source/session-scope';
import { createWatchedSet } from '../../../indexer/source/ws-watched';

function scripted(lists: string[][]) {
  const calls: string[] = [];
  let failNext = false;
  const scope = createSessionScope(new AbortController().signal);
  const set = createWatchedSet({
    watched: async () => lists.shift() ?? [],
    subscriptions: { unsubscribe: async (a) => void calls.push(`drop ${a}`) },
    follow: async (addresses, from) => {
      if (failNext) throw new Error('logsSubscribe refused');
      calls.push(`follow ${addresses.join(',')} from ${from}`);
      return 0;
    },
    catchUpFrom: () => 77,
    scope,
  });
  return { set, calls, scope, failNextFollow: () => (failNext = true) };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('indexer/source ws watched set (pure)', () => {
  it('reads the first set sorted without repeats, then follows what changes', async () => {
    const { set, calls } = scripted([
      ['B', 'A', 'B'],
      ['A', 'C'],
      ['A', 'C'],
    ]);
    expect(await set.initial()).to.deep.equal(['A', 'B']);
    await set.refresh();
    expect(calls).to.deep.equal(['drop B', 'follow C from 77']);
    await set.refresh(); // no change: nothing
    expect(calls.length).to.equal(2);
  });

  it('a new address that cannot be followed ends the session', async () => {
    const { set, scope, failNextFollow } = scripted([['A'], ['A', 'N']]);
    await set.initial();
    failNextFollow();
    const message = await set.refresh().catch((e: Error) => e.message);
    expect(message).to.equal('logsSubscribe refused');
    expect((scope.failure() as Error).message).to.equal('logsSubscribe refused');
  });

  it('a timer tick refreshes only once the first subscriptions are made, one refresh at a time', async () => {
    const { set, calls } = scripted([['A'], ['A', 'B'], ['A', 'B', 'C']]);
    await set.initial();
    set.tick(); // still subscribing the first set: skipped
    await tick();
    expect(calls).to.deep.equal([]);
    set.started();
    set.tick();
    set.tick(); // one is running: skipped
    await tick();
    expect(calls).to.deep.equal(['follow B from 77']);
    set.tick();
    await tick();
    expect(calls).to.deep.equal(['follow B from 77', 'follow C from 77']);
  });
});
