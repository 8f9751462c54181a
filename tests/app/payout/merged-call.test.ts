// mergeWhileInFlight on its own (app/payout/merged-call.ts): a call that records what it was asked and answers when
// the test says, so what goes out together, what each caller gets back and what carried keys see are all visible.
// (shared-chain.test.ts tests it as the worker uses it, through shareChainCalls.)
import { expect } from 'chai';
import { mergeWhileInFlight, CarriedKeys } from '../../../app/payout/merged-call';
import { RPC_CODES } from '../../../common/errors/codes';

interface Call {
  keys: string[];
  resolve(values: string[]): void;
  reject(e: unknown): void;
}

function recordingCall() {
  const calls: Call[] = [];
  const call = (keys: string[]) =>
    new Promise<string[]>((resolve, reject) => calls.push({ keys: [...keys], resolve, reject }));
  return { calls, call };
}

/** Each key's value: the key upper-cased, so a mix-up shows. */
const values = (c: Call) => c.keys.map((k) => k.toUpperCase());
const tick = () => new Promise((r) => setImmediate(r));
const settled = <T>(p: Promise<T>): Promise<{ v?: T; e?: Error & { code?: string } }> =>
  p.then(
    (v) => ({ v }),
    (e: Error & { code?: string }) => ({ e }),
  );

describe('app/payout mergeWhileInFlight (pure: no chain)', () => {
  it('an ask with nothing in flight goes out at once; asks made meanwhile wait and go out together in the next call', async () => {
    const { calls, call } = recordingCall();
    const merged = mergeWhileInFlight(call, 10);
    const a = merged(['a1', 'a2']);
    expect(calls.map((c) => c.keys)).to.deep.equal([['a1', 'a2']]);
    const b = merged(['b1']);
    const c = merged(['c1', 'a1']); // a key another waiting ask has too goes out once
    await tick();
    expect(calls).to.have.length(1); // nothing more while one is in flight
    calls[0].resolve(values(calls[0]));
    expect(await a).to.deep.equal(['A1', 'A2']);
    await tick();
    expect(calls.map((x) => x.keys)).to.deep.equal([
      ['a1', 'a2'],
      ['b1', 'c1', 'a1'],
    ]);
    calls[1].resolve(values(calls[1]));
    expect(await b).to.deep.equal(['B1']);
    expect(await c).to.deep.equal(['C1', 'A1']); // each caller its own keys, in its own order
  });

  it('no call holds more than maxKeys distinct keys, except one caller asking for more alone; the rest wait', async () => {
    const { calls, call } = recordingCall();
    const merged = mergeWhileInFlight(call, 3);
    const first = merged(['x']);
    const asks = [merged(['a', 'b']), merged(['c', 'd']), merged(['e', 'f', 'g', 'h'])];
    calls[0].resolve(values(calls[0]));
    await first;
    await tick();
    expect(calls[1].keys).to.deep.equal(['a', 'b']); // c, d would make 4
    calls[1].resolve(values(calls[1]));
    await tick();
    expect(calls[2].keys).to.deep.equal(['c', 'd']);
    calls[2].resolve(values(calls[2]));
    await tick();
    expect(calls[3].keys).to.deep.equal(['e', 'f', 'g', 'h']); // one caller's keys always go in one call
    calls[3].resolve(values(calls[3]));
    expect(await Promise.all(asks)).to.deep.equal([
      ['A', 'B'],
      ['C', 'D'],
      ['E', 'F', 'G', 'H'],
    ]);
  });

  it('a failed call fails every ask it carried (nothing is kept from it), and the next asks go on', async () => {
    const { calls, call } = recordingCall();
    const merged = mergeWhileInFlight(call, 10);
    const first = merged(['a']);
    const [b, c] = [settled(merged(['b'])), settled(merged(['c']))];
    calls[0].resolve(values(calls[0]));
    await first;
    await tick();
    const boom = new Error('429');
    calls[1].reject(boom);
    expect([(await b).e, (await c).e]).to.deep.equal([boom, boom]);
    const d = merged(['b']);
    expect(calls[2].keys).to.deep.equal(['b']); // asked again, not answered from the failed call
    calls[2].resolve(values(calls[2]));
    expect(await d).to.deep.equal(['B']);
  });

  it('an answer without one value per key is a failed call (MALFORMED_RESPONSE) for every ask it carried', async () => {
    for (const bad of [['A'], ['A', 'B', 'C'], 'AB' as unknown as string[]]) {
      const { calls, call } = recordingCall();
      const merged = mergeWhileInFlight(call, 10);
      const a = settled(merged(['a', 'b']));
      calls[0].resolve(bad);
      expect((await a).e?.code, JSON.stringify(bad)).to.equal(RPC_CODES.MALFORMED_RESPONSE);
    }
  });

  it('a call that throws at once fails its asks as a rejected one does; an empty ask makes no call', async () => {
    let made = 0;
    const merged = mergeWhileInFlight((): Promise<string[]> => {
      made += 1;
      throw new Error('no socket');
    }, 10);
    expect(await merged([])).to.deep.equal([]);
    expect(made).to.equal(0);
    expect((await settled(merged(['a']))).e?.message).to.equal('no socket');
    expect((await settled(merged(['b']))).e?.message).to.equal('no socket'); // and the next call still goes out
    expect(made).to.equal(2);
  });

  it('carried keys join a call that goes out anyway, in the room the asks leave, and get its answers (or undefined)', async () => {
    const { calls, call } = recordingCall();
    const taken: number[] = [];
    const answered: Array<Map<string, string> | undefined> = [];
    let riding = ['a', 'r1', 'r2'];
    const carried: CarriedKeys<string, string> = {
      take(room) {
        taken.push(room);
        const keys = riding.slice(0, room);
        riding = [];
        return keys;
      },
      answer: (answers) => answered.push(answers),
    };
    const merged = mergeWhileInFlight(call, 4, carried);
    const a = merged(['a', 'b']);
    // Room 2 (of 4): 'a' and 'r1' are taken; 'a' is asked already, so it is not asked twice.
    expect(taken).to.deep.equal([2]);
    expect(calls[0].keys).to.deep.equal(['a', 'b', 'r1']);
    calls[0].resolve(values(calls[0]));
    expect(await a).to.deep.equal(['A', 'B']);
    expect(answered).to.have.length(1);
    expect([...answered[0]!]).to.deep.equal([
      ['a', 'A'],
      ['b', 'B'],
      ['r1', 'R1'],
    ]);
    // A failed call: the carried keys are answered with nothing.
    const b = settled(merged(['c']));
    calls[1].reject(new Error('timeout'));
    await b;
    expect(answered[1]).to.equal(undefined);
    // No ask, no call: carried keys never make one of their own.
    riding = ['r3'];
    await tick();
    expect(calls).to.have.length(2);
  });
});
