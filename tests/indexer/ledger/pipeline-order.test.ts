// The pipeline's order (indexer/ledger/pipeline.ts), without a database: a scripted `run` stands for one batch's
// transaction, so what is checked is only the pipeline's own rules — batches settle in the order given, the next
// one begins once the one before is committing and its work waits for that one to settle, and a failure takes every
// batch given after it down (PIPELINE_BROKEN), unapplied. pipeline.test.ts checks the same on the real ledger.
import { expect } from 'chai';
import { isOncepayError } from '../../../common/errors';
import { LEDGER_CODES } from '../../../common/errors/codes';
import type { ApplyBatchInput, ApplyBatchResult } from '../../../indexer/ledger';
import { applyInOrder, createPipeline, type PipelineBatch } from '../../../indexer/ledger/pipeline';
import { settled } from './fixtures';

interface Batch extends PipelineBatch {
  name: string;
}

/** One call of `run`: the batch, what it was told, and the hands that finish it. */
interface Call {
  s: Batch;
  next: () => Batch | undefined;
  gate: Promise<void>;
  /** Its COMMIT goes out (onCommitting). */
  commit(): void;
  succeed(): void;
  fail(e: Error): void;
}

const result = (inserted: number): ApplyBatchResult => ({
  inserted,
  duplicates: 0,
  credited: [],
  exceptions: [],
  fulfilled: [],
  rejected: [],
});

/** A pipeline over a scripted run; `calls` in the order run was called. */
function scripted() {
  const calls: Call[] = [];
  const stage = (input: ApplyBatchInput): Batch => {
    if (input.cluster === 'bad') throw new Error('refused at stage');
    return { cluster: input.cluster, source: input.source, name: String(input.checkpoint?.slot) };
  };
  const pipe = createPipeline(stage, (s, next, gate, onCommitting) => {
    return new Promise<ApplyBatchResult>((resolve, reject) => {
      gate.catch(reject); // as the ledger's run does: a broken gate rolls the batch back
      calls.push({
        s,
        next,
        gate,
        commit: onCommitting,
        succeed: () => resolve(result(Number(s.name))),
        fail: reject,
      });
    });
  });
  const give = (n: number, cluster = 'localnet') =>
    pipe.apply({ cluster, source: 'file', receipts: [], checkpoint: { slot: BigInt(n) } });
  return { calls, give, pipe };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('indexer/ledger pipeline order (pure)', () => {
  it('runs the first at once, begins the next only when the one before commits, and tells each its next', async () => {
    const { calls, give } = scripted();
    const one = give(1);
    const two = give(2);
    const three = give(3);
    expect(calls.map((c) => c.s.name)).to.deep.equal(['1']);
    expect(calls[0].next()!.name).to.equal('2');
    calls[0].commit();
    expect(calls.map((c) => c.s.name)).to.deep.equal(['1', '2']); // begun while 1 commits
    expect(calls[1].next()!.name).to.equal('3');
    let gateOpen = false;
    void calls[1].gate.then(() => (gateOpen = true));
    await tick();
    expect(gateOpen).to.equal(false); // 2's work waits until 1 has settled
    calls[0].succeed();
    expect((await one).inserted).to.equal(1);
    await tick();
    expect(gateOpen).to.equal(true);
    calls[1].commit();
    calls[1].succeed();
    expect((await two).inserted).to.equal(2);
    expect(calls.map((c) => c.s.name)).to.deep.equal(['1', '2', '3']);
    calls[2].succeed(); // never committing (nothing after it): settles all the same
    expect((await three).inserted).to.equal(3);
  });

  it('settles in the order given even when a later batch finishes first', async () => {
    const { calls, give } = scripted();
    const order: string[] = [];
    const one = give(1).then(() => order.push('1'));
    const two = give(2).then(() => order.push('2'));
    calls[0].commit();
    calls[1].succeed(); // 2 done before 1
    await tick();
    expect(order).to.deep.equal([]);
    calls[0].succeed();
    await Promise.all([one, two]);
    expect(order).to.deep.equal(['1', '2']);
  });

  it('a failed batch rejects with its own error; the one begun after it sees a broken gate; the rest never run', async () => {
    const { calls, give } = scripted();
    const one = settled(give(1));
    const two = settled(give(2));
    const three = settled(give(3));
    calls[0].commit();
    const gate = settled(calls[1].gate);
    calls[0].fail(new Error('commit refused'));
    const first = await one;
    expect(first.ok === false && (first.error as Error).message).to.equal('commit refused');
    const g = await gate;
    expect(g.ok === false && isOncepayError(g.error, LEDGER_CODES.PIPELINE_BROKEN)).to.equal(true);
    for (const later of [await two, await three]) {
      expect(later.ok).to.equal(false);
      expect(isOncepayError((later as { error: unknown }).error, LEDGER_CODES.PIPELINE_BROKEN)).to.equal(true);
    }
    expect(calls.map((c) => c.s.name)).to.deep.equal(['1', '2']); // 3 never ran
    const after = await settled(give(4));
    expect(after.ok === false && isOncepayError(after.error, LEDGER_CODES.PIPELINE_BROKEN)).to.equal(true);
    expect(calls.length).to.equal(2);
  });

  it('a batch refused when staged rejects alone: the pipeline goes on', async () => {
    const { calls, give } = scripted();
    const bad = await settled(give(1, 'bad'));
    expect(bad.ok === false && (bad.error as Error).message).to.equal('refused at stage');
    const two = give(2);
    calls[0].succeed();
    expect((await two).inserted).to.equal(2);
  });

  it('applyInOrder keeps two in flight, hands each result over in order, and stops at the first failure', async () => {
    const { calls, pipe } = scripted();
    const inputs = [1, 2, 3].map((n) => ({
      cluster: 'localnet',
      source: 'file' as const,
      receipts: [],
      checkpoint: { slot: BigInt(n) },
    }));
    const seen: number[] = [];
    const running = settled(applyInOrder({ pipeline: () => pipe }, inputs, (r) => seen.push(r.inserted)));
    await tick();
    expect(calls.length).to.equal(1);
    calls[0].commit();
    calls[0].succeed();
    await tick();
    calls[1].commit();
    calls[1].fail(new Error('deadlock, gave up'));
    const end = await running;
    expect(end.ok === false && (end.error as Error).message).to.equal('deadlock, gave up');
    expect(seen).to.deep.equal([1]);
    // 3 was given once 1 had settled (two in flight) and begun on 2's commit; its gate broke, so it rolled back.
    expect(calls.map((c) => c.s.name)).to.deep.equal(['1', '2', '3']);
    const third = await settled(calls[2].gate);
    expect(third.ok === false && isOncepayError(third.error, LEDGER_CODES.PIPELINE_BROKEN)).to.equal(true);
  });
});
