import { expect } from 'chai';
import { chunks, planChunk, scanRange, SlotOutcome } from '../../../indexer/source/scan-plan';

describe('indexer/source scan plan (pure)', () => {
  it('starts at the checkpoint minus the re-scan window and stops at the target', () => {
    expect(scanRange({ checkpoint: 100, target: 150, rescanWindow: 32, maxSlotsPerPass: 1000 })).to.deep.equal({
      start: 69,
      end: 150,
    });
    expect(scanRange({ checkpoint: 10, target: 150, rescanWindow: 32, maxSlotsPerPass: 1000 })).to.deep.equal({
      start: 0,
      end: 150,
    });
    expect(scanRange({ checkpoint: 100, target: 5000, rescanWindow: 0, maxSlotsPerPass: 100 })).to.deep.equal({
      start: 101,
      end: 200,
    });
  });

  it('has nothing to do at or behind the checkpoint', () => {
    expect(scanRange({ checkpoint: 150, target: 150, rescanWindow: 32, maxSlotsPerPass: 1000 })).to.equal(null);
    expect(scanRange({ checkpoint: 151, target: 150, rescanWindow: 32, maxSlotsPerPass: 1000 })).to.equal(null);
  });

  it('without a checkpoint starts at --from-slot, else one window below the target', () => {
    expect(
      scanRange({ checkpoint: null, fromSlot: 7, target: 150, rescanWindow: 32, maxSlotsPerPass: 1000 }),
    ).to.deep.equal({ start: 7, end: 150 });
    expect(scanRange({ checkpoint: null, target: 150, rescanWindow: 32, maxSlotsPerPass: 1000 })).to.deep.equal({
      start: 118,
      end: 150,
    });
    expect(
      scanRange({ checkpoint: null, fromSlot: 200, target: 150, rescanWindow: 32, maxSlotsPerPass: 1000 }),
    ).to.equal(null);
  });

  const ok = (slot: number, n = 1): SlotOutcome<string> => ({
    slot,
    status: 'ok',
    receipts: Array.from({ length: n }, (_, i) => `${slot}.${i}`),
  });
  const skipped = (slot: number): SlotOutcome<string> => ({ slot, status: 'skipped' });
  const failed = (slot: number): SlotOutcome<string> => ({ slot, status: 'failed', code: 'X', message: 'boom' });

  it('moves the checkpoint to the slot before the next listed block, or the end of the pass', () => {
    const p = planChunk([ok(10), skipped(12), ok(13, 2)], { nextListed: 20, end: 50, previousCheckpoint: 5 });
    expect(p.checkpoint).to.equal(19);
    expect(p.receipts).to.deep.equal(['10.0', '13.0', '13.1']);
    expect(p.stoppedAt).to.equal(null);
    expect([p.blocks, p.skipped]).to.deep.equal([2, 1]);
    expect(planChunk([ok(10)], { nextListed: null, end: 50, previousCheckpoint: 5 }).checkpoint).to.equal(50);
    expect(planChunk([], { nextListed: null, end: 50, previousCheckpoint: 5 }).checkpoint).to.equal(50);
  });

  it('stops just below the first slot that failed; nothing after it is applied', () => {
    const p = planChunk([ok(10), failed(12), ok(13)], { nextListed: 20, end: 50, previousCheckpoint: 5 });
    expect(p.checkpoint).to.equal(11);
    expect(p.receipts).to.deep.equal(['10.0']);
    expect(p.stoppedAt).to.deep.include({ slot: 12 });
  });

  it('does not stop on a failure inside the re-scan window (processed by an earlier pass)', () => {
    const p = planChunk([failed(4), ok(10)], { nextListed: null, end: 50, previousCheckpoint: 5 });
    expect(p.stoppedAt).to.equal(null);
    expect(p.checkpoint).to.equal(50);
    expect(p.ignored.map((x) => x.slot)).to.deep.equal([4]);
  });

  it('splits into chunks', () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).to.deep.equal([[1, 2], [3, 4], [5]]);
    expect(chunks([], 2)).to.deep.equal([]);
  });
});
