// deferSends on its own (app/payout/deferred-sends.ts): the fast executor's deferred `sent` bookkeeping, with a
// writer that records what it was asked to write and answers when the test says.
import { expect } from 'chai';
import { deferSends } from '../../../app/payout/deferred-sends';

function recordingWriter() {
  const writes: Array<{ id: string; sends: number; resolve(): void; reject(e: unknown): void }> = [];
  const write = (id: string, sends: number) =>
    new Promise<void>((resolve, reject) => writes.push({ id, sends, resolve, reject }));
  return { writes, write };
}

describe('app/payout deferSends (pure: no database)', () => {
  it('counts the sends of each attempt and hands them to its settling write, once', () => {
    const { writes, write } = recordingWriter();
    const sends = deferSends(write);
    sends.sent('a1', 10);
    sends.sent('a1', 20);
    sends.sent('a2', 15);
    expect(sends.take('a1')).to.equal(2);
    expect(sends.take('a1')).to.equal(0); // taken: the settling write carries them, nobody else
    expect(sends.take('unknown')).to.equal(0);
    expect(writes).to.deep.equal([]); // nothing written on its own
    expect(sends.take('a2')).to.equal(1);
  });

  it('record() writes only the attempts due (by their first unrecorded send), each once, without waiting', async () => {
    const { writes, write } = recordingWriter();
    const sends = deferSends(write);
    sends.sent('old', 100);
    sends.sent('old', 900); // the first unrecorded send is what counts
    sends.sent('new', 950);
    const recording = sends.record((since) => 1000 - since >= 500);
    expect(writes.map((w) => [w.id, w.sends])).to.deep.equal([['old', 2]]);
    expect(sends.take('old')).to.equal(0); // written: not carried again by a settling write
    expect(sends.take('new')).to.equal(1);
    void sends.record(() => true);
    expect(writes).to.have.length(1); // nothing left unrecorded
    writes[0].resolve();
    await recording;
    await sends.written();
  });

  it('written() waits for every write in flight and surfaces the first failure; then nothing is in flight', async () => {
    const { writes, write } = recordingWriter();
    const sends = deferSends(write);
    await sends.written(); // none in flight: resolves at once
    sends.sent('a', 1);
    void sends.record(() => true);
    sends.sent('b', 2);
    void sends.record(() => true);
    expect(writes.map((w) => w.id)).to.deep.equal(['a', 'b']);
    let done = false;
    const waiting = sends.written().then(
      () => (done = true),
      (e: Error) => e.message,
    );
    writes[0].resolve();
    await new Promise((r) => setImmediate(r));
    expect(done).to.equal(false); // b is still in flight
    writes[1].reject(new Error('connection terminated'));
    expect(await waiting).to.equal('connection terminated');
    await sends.written(); // the failure was reported once; nothing in flight now
  });

  it('a failed write is never an unhandled rejection before written() is awaited', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const sends = deferSends(() => Promise.reject(new Error('gone')));
      sends.sent('a', 1);
      await sends.record(() => true).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).to.deep.equal([]);
      const e = await sends.written().then(
        () => null,
        (x: Error) => x.message,
      );
      expect(e).to.equal('gone');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
