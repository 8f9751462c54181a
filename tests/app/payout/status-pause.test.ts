// statusPauses on its own (app/payout/status-pause.ts): the pauses are driven through their CarriedKeys side (take,
// answer) the way merged-call.ts drives them, so which pause rides, when it ends and with what are all visible.
// (shared-chain.test.ts tests them as the worker uses them, through shareChainCalls.)
import { expect } from 'chai';
import { statusPauses } from '../../../app/payout/status-pause';

const tick = () => new Promise((r) => setImmediate(r));
const LONG = 60_000; // a pause that only a ride, an abort or the test ends
/** Whether `p` has settled (after the turn's microtasks), and to what. */
function watch<T>(p: Promise<T>): { done: boolean; value?: T } {
  const w: { done: boolean; value?: T } = { done: false };
  void p.then((v) => Object.assign(w, { done: true, value: v }));
  return w;
}

describe('app/payout statusPauses (pure: no chain)', () => {
  it('a pause is carried by the next call with its keys, and that call’s answer ends it early with their values', async () => {
    const pauses = statusPauses<string, number>();
    const p = watch(pauses.pause(['s1', 's2'], LONG));
    expect(pauses.take(10)).to.deep.equal(['s1', 's2']);
    expect(pauses.take(10)).to.deep.equal([]); // carried already: not carried twice
    await tick();
    expect(p.done).to.equal(false); // the call is still in flight
    pauses.answer(
      new Map([
        ['s2', 2],
        ['s1', 1],
        ['x', 9],
      ]),
    );
    await tick();
    expect(p).to.deep.equal({ done: true, value: [1, 2] }); // its keys' values, in its order
  });

  it('a pause is carried only where its keys fit the room the call leaves; the others wait for a later call', async () => {
    const pauses = statusPauses<string, number>();
    const big = watch(pauses.pause(['a', 'b', 'c'], LONG));
    const small = watch(pauses.pause(['d'], LONG));
    expect(pauses.take(2)).to.deep.equal(['d']);
    pauses.answer(new Map([['d', 4]]));
    await tick();
    expect([big.done, small]).to.deep.equal([false, { done: true, value: [4] }]);
    expect(pauses.take(3)).to.deep.equal(['a', 'b', 'c']);
    pauses.answer(
      new Map([
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ]),
    );
    await tick();
    expect(big).to.deep.equal({ done: true, value: [1, 2, 3] });
  });

  it('without a call meanwhile a pause ends at its time, without values (its slot looks for itself)', async () => {
    const pauses = statusPauses<string, number>();
    expect(await pauses.pause(['s1'], 5)).to.equal(undefined);
    expect(pauses.take(10)).to.deep.equal([]); // gone: a later call does not carry it
  });

  it('a pause whose time is up while a call carries it waits for that answer; a failed call ends it without values', async () => {
    const pauses = statusPauses<string, number>();
    const served = pauses.pause(['s1'], 5);
    expect(pauses.take(10)).to.deep.equal(['s1']);
    await new Promise((r) => setTimeout(r, 30)); // its time is up, the call still in flight
    const w = watch(served);
    await tick();
    expect(w.done).to.equal(false);
    pauses.answer(new Map([['s1', 7]]));
    expect(await served).to.deep.equal([7]);

    const failed = pauses.pause(['s2'], 5);
    pauses.take(10);
    await new Promise((r) => setTimeout(r, 30));
    pauses.answer(undefined); // the call failed: no values, and its time is up
    expect(await failed).to.equal(undefined);
  });

  it('a failed call does not end a pause whose time is not up: it boards the next call and rides again', async () => {
    const pauses = statusPauses<string, number>();
    const p = watch(pauses.pause(['s1'], LONG));
    pauses.take(10);
    pauses.answer(undefined);
    await tick();
    expect(p.done).to.equal(false);
    expect(pauses.take(10)).to.deep.equal(['s1']);
    pauses.answer(new Map([['s1', 1]]));
    await tick();
    expect(p).to.deep.equal({ done: true, value: [1] });
  });

  it('an abort ends a pause at once without values (already aborted: it never boards); a pause with no keys never boards', async () => {
    const pauses = statusPauses<string, number>();
    const stop = new AbortController();
    const p = pauses.pause(['s1'], LONG, stop.signal);
    const none = watch(pauses.pause([], LONG, stop.signal));
    expect(pauses.take(10)).to.deep.equal(['s1']);
    stop.abort();
    expect(await p).to.equal(undefined);
    await tick();
    expect(none.done).to.equal(true);
    pauses.answer(new Map([['s1', 1]])); // the call's answer finds nobody waiting
    expect(await pauses.pause(['s2'], LONG, stop.signal)).to.equal(undefined);
    expect(pauses.take(10)).to.deep.equal([]);
  });
});
