// The websocket session's apply queue (indexer/source/apply-queue.ts), without I/O: one batch at a time, each
// batch what was queued since the last one began; a failed batch ends the session; nothing begins after the end.
import { expect } from 'chai';
import { createApplyQueue } from '../../../indexer/source/apply-queue';
import { createSessionScope } from '../../../indexer/source/session-scope';
import { SOURCE_CODES } from '../../../common/errors/codes';

/** A controllable batch: the items it got and the hand that finishes it. */
function scripted() {
  const batches: Array<{ items: number[]; done: () => void; fail: (e: Error) => void }> = [];
  const apply = (items: number[]) =>
    new Promise<void>((resolve, reject) => batches.push({ items, done: resolve, fail: reject }));
  return { batches, apply };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('indexer/source apply queue (pure)', () => {
  it('applies one batch at a time; what arrives meanwhile goes together in the next; idle waits for all', async () => {
    const scope = createSessionScope(new AbortController().signal);
    const { batches, apply } = scripted();
    const q = createApplyQueue(apply, scope);
    q.enqueue([1]);
    q.enqueue([2, 3]);
    q.enqueue([4]);
    expect(batches.map((b) => b.items)).to.deep.equal([[1]]);
    let idle = false;
    const waiting = q.idle().then(() => (idle = true));
    batches[0].done();
    await tick();
    expect(batches.map((b) => b.items)).to.deep.equal([[1], [2, 3, 4]]);
    expect(idle).to.equal(false);
    expect(q.running()).to.not.equal(null);
    batches[1].done();
    await waiting;
    expect(idle).to.equal(true);
    expect(q.running()).to.equal(null);
    await q.idle(); // nothing queued: at once
  });

  it('a failed batch ends the session with its error; nothing more is applied', async () => {
    const scope = createSessionScope(new AbortController().signal);
    const { batches, apply } = scripted();
    const q = createApplyQueue(apply, scope);
    q.enqueue([1]);
    q.enqueue([2]);
    batches[0].fail(new Error('database away'));
    await tick();
    expect((scope.failure() as Error).message).to.equal('database away');
    q.enqueue([3]);
    await tick();
    expect(batches.length).to.equal(1);
  });

  it('idle() once the session has ended rejects with the end, even with items still queued', async () => {
    const stop = new AbortController();
    const scope = createSessionScope(stop.signal);
    const { batches, apply } = scripted();
    const q = createApplyQueue(apply, scope);
    q.enqueue([1]);
    stop.abort();
    q.enqueue([2]); // after the end: queued, never begun
    batches[0].done();
    await tick();
    let code = '';
    await q.idle().catch((e: { code?: string }) => (code = e.code ?? ''));
    expect(code).to.equal(SOURCE_CODES.STOPPED);
    expect(batches.length).to.equal(1);
  });
});
