// The rule the differential comparison applies to tests/programs/differences.ts (no runtime needed): a listed case may
// differ only in its differing transactions' answers, and only as its row says.
import { expect } from 'chai';
import { answerOf, type CaseDifference } from '../../testkit/program/differential';
import { KNOWN_DIFFERENCES, unlikeRow, type KnownDifference } from './differences';

const line = (o: object) => `rt0: ${JSON.stringify({ events: [], ...o })}`;
const refusedBySeeds = line({ ok: false, error: 'custom program error: 0x7d6', anchorError: 'ConstraintSeeds (2006)' });
const failedToComplete = line({
  ok: false,
  error: 'TransactionErrorInstructionError { index: 0, error: ProgramFailedToComplete }',
  anchorError: null,
});

function difference(anchor: string, lite: string): CaseDifference {
  return {
    transactions: [{ index: 1, lines: [anchor, lite], answers: [answerOf(anchor), answerOf(lite)] }],
    accounts: [],
  };
}

describe('program differences table (tests/programs/differences.ts)', function () {
  const row: KnownDifference = {
    suite: 's',
    case: 'c',
    anchor: 'ConstraintSeeds (2006)',
    lite: /^runtime: .*ProgramFailedToComplete/,
    reason: 'r',
  };

  it('reads an answer as ok, the Anchor error the logs name, or the runtime error', function () {
    expect(answerOf(line({ ok: true, error: null, anchorError: null }))).to.equal('ok');
    expect(answerOf(refusedBySeeds)).to.equal('ConstraintSeeds (2006)');
    expect(answerOf(failedToComplete)).to.match(/^runtime: TransactionErrorInstructionError/);
  });

  it('accepts a case that differs exactly as its row says', function () {
    expect(unlikeRow(row, difference(refusedBySeeds, failedToComplete))).to.deep.equal([]);
  });

  it('refuses other answers, swapped answers, a differing account, and a case run on one binary', function () {
    const ok = line({ ok: true, error: null, anchorError: null });
    expect(unlikeRow(row, difference(refusedBySeeds, ok))).to.have.length(1);
    expect(unlikeRow(row, difference(failedToComplete, refusedBySeeds))).to.have.length(1);
    const withAccount = difference(refusedBySeeds, failedToComplete);
    withAccount.accounts.push({ index: 0, lines: ['0:x owner a', '0:x owner b'] });
    expect(unlikeRow(row, withAccount)).to.have.length(1);
    expect(unlikeRow({ ...row, accountsDiffer: 'one paid' }, withAccount)).to.deep.equal([]);
    expect(unlikeRow(row, { transactions: [], accounts: [], onlyOn: 'anchor' })).to.deep.equal(['ran on anchor only']);
  });

  it('gives every row a reason and names each case once', function () {
    const keys = KNOWN_DIFFERENCES.map((d) => `${d.runtime ?? '*'} | ${d.suite} | ${d.case}`);
    expect(new Set(keys).size).to.equal(keys.length);
    for (const d of KNOWN_DIFFERENCES) expect(d.reason.length, d.case).to.be.greaterThan(40);
  });
});
