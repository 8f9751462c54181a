// The batch plan (indexer/ledger/staged.ts), without a database: a batch as given, and what node works out from it
// once — validation, the invoice lock, the chain order — before or inside its transaction.
import { expect } from 'chai';
import pino from 'pino';
import { isOncepayError } from '../../../common/errors';
import { LEDGER_CODES } from '../../../common/errors/codes';
import type { Receipt } from '../../../indexer/decode/receipt';
import type { ApplyBatchInput } from '../../../indexer/ledger';
import { createPrediction, pathOf } from '../../../indexer/ledger/prediction';
import { chainOf, lockOf, prepareEarly, prepareLate, stage, validated } from '../../../indexer/ledger/staged';
import { receipt } from './fixtures';

/** A logger whose lines are kept in `lines`. */
function captured() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { log, lines };
}

const good = (signature: string, slot: bigint) => receipt({ signature, slot, destination: 'DEST', amount: 5n });
const input = (receipts: unknown[]): ApplyBatchInput => ({
  cluster: 'localnet',
  source: 'file',
  receipts: receipts as Receipt[],
  checkpoint: { slot: 42n },
});

describe('indexer/ledger staged batch (pure)', () => {
  it('stages a batch with its path and checkpoint text, and refuses a source or cluster the ledger does not take', () => {
    const s = stage(input([]));
    expect(s.path).to.equal(pathOf('localnet', 'file'));
    expect(s.checkpoint).to.equal('42');
    expect(stage({ ...input([]), checkpoint: undefined }).checkpoint).to.equal(undefined);
    const refused = (i: ApplyBatchInput) => {
      try {
        stage(i);
      } catch (e) {
        return e;
      }
      return null;
    };
    expect(isOncepayError(refused({ ...input([]), source: 'mail' as never }), LEDGER_CODES.INVALID_SOURCE)).to.equal(
      true,
    );
    expect(isOncepayError(refused({ ...input([]), cluster: '' }), LEDGER_CODES.INVALID_CLUSTER)).to.equal(true);
    expect(
      isOncepayError(refused({ ...input([]), checkpoint: { slot: -1n } }), LEDGER_CODES.INVALID_CHECKPOINT),
    ).to.equal(true);
  });

  it('validates once: malformed receipts are set aside and logged one line each, the good ones kept in order', () => {
    const { log, lines } = captured();
    const s = stage(input([good('a', 2n), { signature: 'broken' }, good('b', 1n)]));
    const first = validated(s, log);
    expect(first.map((r) => r.signature)).to.deep.equal(['a', 'b']);
    expect(s.rejected!.map((r) => [r.index, r.code])).to.deep.equal([[1, LEDGER_CODES.INVALID_RECEIPT]]);
    expect(validated(s, log)).to.equal(first); // made once
    expect(lines.map((l) => [l.code, l.index, l.source])).to.deep.equal([[LEDGER_CODES.INVALID_RECEIPT, 1, 'file']]);
  });

  it('makes the lock and the chain order once each; the chain is in chain order without repeats', () => {
    const s = stage(input([good('b', 2n), good('a', 2n), good('b', 2n), good('c', 1n)]));
    const lock = lockOf(s);
    expect(lockOf(s)).to.equal(lock);
    const chain = chainOf(s, validated(s, captured().log));
    expect(chain.map((r) => r.signature)).to.deep.equal(['c', 'a', 'b']);
    expect(chainOf(s, [])).to.equal(chain);
  });

  it('prepares early only what its path will use: the lock only where the probe is skipped', () => {
    const prediction = createPrediction();
    const probed = stage(input([good('a', 1n)]));
    prepareEarly(probed, prediction, captured().log);
    expect(probed.good!.length).to.equal(1);
    expect(probed.lock).to.equal(undefined);
    prepareLate(probed, prediction);
    expect(probed.chain).to.equal(undefined); // a probed batch's candidates are the probe's answer

    prediction.record(probed.path, 100, 100); // the path's last batch was all new: no probe next
    const unprobed = stage(input([good('b', 2n), good('a', 1n)]));
    prepareLate(unprobed, prediction);
    expect(unprobed.chain).to.equal(undefined); // not validated yet: nothing to sort
    prepareEarly(unprobed, prediction, captured().log);
    expect(unprobed.lock).to.not.equal(undefined);
    prepareLate(unprobed, prediction);
    expect(unprobed.chain!.map((r) => r.signature)).to.deep.equal(['a', 'b']);
    prepareEarly(undefined, prediction, captured().log); // nothing given after: nothing to do
  });

  it("never throws while preparing: what fails fails again in the batch's own transaction", () => {
    const s = stage(input([]));
    (s as { receipts: unknown }).receipts = null; // not a list: validation throws
    expect(() => prepareEarly(s, createPrediction(), captured().log)).to.not.throw();
    expect(() => validated(s, captured().log)).to.throw();
  });
});
