// The checkpoint settler (indexer/source/ws-settling.ts, ws-settler.ts), without a node: slot waits, the settling
// sets and what they hold the checkpoint at, and follow/settle over a scripted RPC.
import { expect } from 'chai';
import { createSessionScope } from '../../../indexer/source/session-scope';
import { createSettler, SETTLE_SLOTS_BY_HTTP } from '../../../indexer/source/ws-settler';
import { createSettling, createSlotWatch } from '../../../indexer/source/ws-settling';

const tick = () => new Promise((r) => setImmediate(r));

describe('indexer/source ws settling (pure)', () => {
  it('a wait for a slot above a mark resolves on the first slot notified above it, or at once if one was', async () => {
    const watch = createSlotWatch();
    let resolved = false;
    const waiting = watch.above(10).then(() => (resolved = true));
    watch.heard(10);
    await tick();
    expect(resolved).to.equal(false);
    watch.heard(11);
    await waiting;
    expect(resolved).to.equal(true);
    await watch.above(5); // 11 was heard: at once
  });

  it('the checkpoint is held at the lowest hold of the sets settling; a set is due once the finalized slot reaches it', () => {
    const s = createSettling();
    expect(s.held(100)).to.equal(100);
    const live = s.add(['L'], null); // live only: holds nothing
    const caught = s.add(['A', 'B'], 40);
    expect(s.held(100)).to.equal(40);
    caught.hold = 90;
    caught.until = 95;
    expect(s.held(100)).to.equal(90);
    expect(s.due(94)).to.deep.equal([]);
    expect(s.due(95)).to.deep.equal([caught]);
    s.done(caught);
    expect(s.held(100)).to.equal(100);
    expect(live.hold).to.equal(Infinity);
  });
});

/** A scripted node: finalized and processed slots as set, each getSlot('processed') answered `step` higher. */
function scriptedNode() {
  const node = { finalized: 50, processed: 60, step: 0, calls: [] as string[] };
  const rpc = {
    getSlot: async (commitment: string) => {
      node.calls.push(commitment);
      if (commitment === 'finalized') return node.finalized;
      node.processed += node.step;
      return node.processed;
    },
  };
  return { node, rpc: rpc as never };
}

describe('indexer/source ws settler (scripted RPC)', () => {
  it('follows: subscribes, catches up to the finalized slot read after, and holds the checkpoint until settled', async () => {
    const { node, rpc } = scriptedNode();
    const scope = createSessionScope(new AbortController().signal);
    const subscribed: string[] = [];
    const catchUps: Array<[string[], number, number | undefined]> = [];
    const settler = createSettler({
      rpc,
      scope,
      subscriptions: { subscribe: async (a) => void subscribed.push(a), has: (a) => a !== 'GONE' },
      catchUp: async (addresses, from, min) => void catchUps.push([[...addresses], from, min]),
    });
    const following = settler.follow(['A', 'GONE'], 30);
    await tick();
    // Waits for a slot notified above the one after the processed slot read then (60): the node applied them.
    expect(subscribed).to.deep.equal(['A', 'GONE']);
    let followed = false;
    void following.then(() => (followed = true));
    settler.heard(61); // not above 60 + 1: the node may have begun 61 before it applied them
    await tick();
    expect(followed).to.equal(false);
    settler.heard(62);
    expect(await following).to.equal(50);
    expect(catchUps).to.deep.equal([[['A', 'GONE'], 30, undefined]]);
    expect(settler.held(70)).to.equal(50); // held at the finalized slot read after subscribing
    await settler.settle(59); // the processed slot read last (60) is not final yet
    expect(catchUps.length).to.equal(1);
    await settler.settle(60);
    // Caught up once more from 51, from a node whose finalized slot reached 60, for the addresses still watched.
    expect(catchUps[1]).to.deep.equal([['A'], 51, 60]);
    expect(settler.held(70)).to.equal(70);
    expect(node.calls).to.deep.equal(['finalized', 'processed', 'processed']);
  });

  it('without slot notifications, SETTLE_SLOTS_BY_HTTP processed slots stand for one', async () => {
    const { node, rpc } = scriptedNode();
    node.step = SETTLE_SLOTS_BY_HTTP + 1;
    const scope = createSessionScope(new AbortController().signal);
    const settler = createSettler({
      rpc,
      scope,
      subscriptions: { subscribe: async () => undefined, has: () => true },
      catchUp: async () => undefined,
    });
    settler.slotsOnSocket = false;
    expect(await settler.follow(['A'], null)).to.equal(50);
    // Read once after the answers, once past the margin, once more for the slot the set settles at.
    expect(node.calls).to.deep.equal(['finalized', 'processed', 'processed', 'processed']);
    expect(settler.held(70)).to.equal(50);
  });

  it('a follow in progress ends with the session', async () => {
    const { rpc } = scriptedNode();
    const scope = createSessionScope(new AbortController().signal);
    const settler = createSettler({
      rpc,
      scope,
      subscriptions: { subscribe: () => new Promise(() => undefined), has: () => true },
      catchUp: async () => undefined,
    });
    const following = settler.follow(['A'], 1).catch((e: Error) => e.message);
    scope.fail(new Error('socket closed'));
    expect(await following).to.equal('socket closed');
  });
});
