// The probe prediction (indexer/ledger/prediction.ts), without a database: which batches probe and which COPY.
import { expect } from 'chai';
import { createPrediction, historyOf, pathOf, PREDICT_MIN } from '../../../indexer/ledger/prediction';

describe('indexer/ledger prediction (pure)', () => {
  it('reads a batch of PREDICT_MIN distinct receipts or more as all new, mostly new or mostly known', () => {
    expect(historyOf(PREDICT_MIN, PREDICT_MIN)).to.equal('all');
    expect(historyOf(100, 51)).to.equal('most');
    expect(historyOf(100, 50)).to.equal('few'); // half is not "mostly new"
    expect(historyOf(100, 0)).to.equal('few');
    expect(historyOf(PREDICT_MIN - 1, PREDICT_MIN - 1)).to.equal(undefined); // too small to say
  });

  it('a path never seen probes and copies; all new: no probe, COPY; mostly new: no probe, INSERT; mostly known: probe', () => {
    const p = createPrediction();
    const path = pathOf('localnet', 'scanner');
    expect([p.probes(path), p.copies(path)]).to.deep.equal([true, true]);
    p.record(path, 100, 100);
    expect([p.probes(path), p.copies(path)]).to.deep.equal([false, true]);
    p.record(path, 100, 60);
    expect([p.probes(path), p.copies(path)]).to.deep.equal([false, false]);
    p.record(path, 100, 10);
    expect([p.probes(path), p.copies(path)]).to.deep.equal([true, true]);
  });

  it('a small batch leaves the prediction as it was, and each (cluster, source) path has its own', () => {
    const p = createPrediction();
    const scanner = pathOf('localnet', 'scanner');
    const file = pathOf('localnet', 'file');
    const other = pathOf('devnet', 'scanner');
    p.record(scanner, 100, 100);
    p.record(scanner, PREDICT_MIN - 1, 0);
    expect(p.probes(scanner)).to.equal(false);
    expect(p.probes(file)).to.equal(true);
    expect(p.probes(other)).to.equal(true);
    expect(new Set([scanner, file, other]).size).to.equal(3);
  });
});
