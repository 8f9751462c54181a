// describeProgram: how every suite in tests/programs is declared. The body runs once per runtime (bankrun, LiteSVM)
// and per binary (binaries.ts), each case seeded with the same keys on both binaries; a last test per runtime then
// compares what the two binaries did in every case (differential.ts), allowing only what differences.ts lists.
import { expect } from 'chai';
import type { ProgramBinary } from '../../common/program-binary';
import { BINARIES, COMPARING, DEV_ONLY_BINARIES_ENV } from '../../testkit/program/binaries';
import {
  beginCase,
  caseKey,
  comparedCases,
  describeDifference,
  differingCases,
  endCase,
} from '../../testkit/program/differential';
import { KNOWN_DIFFERENCES, knownDifference, unlikeRow } from './differences';
import { seedKeys } from '../../testkit/program/keys';
import { RUNTIMES, type RuntimeName } from '../../testkit/program/runtimes';

export function describeProgram(suite: string, body: (runtime: RuntimeName, binary: ProgramBinary) => void): void {
  for (const runtime of RUNTIMES) {
    for (const binary of BINARIES) {
      describe(`${suite} (${binary}, ${runtime})`, function () {
        beforeEach(function () {
          const key = caseKey(runtime, suite, this.currentTest!.title);
          seedKeys(key);
          beginCase(key, binary);
        });
        afterEach(async function () {
          await endCase();
        });
        body(runtime, binary);
      });
    }
  }
  describe(`${suite}: the Anchor program and the lite twin`, function () {
    for (const runtime of RUNTIMES) {
      it(`answer every case alike (${runtime}): same successes, errors, events and accounts`, function () {
        if (!COMPARING) {
          this.skip(); // dev-only narrowed run (binaries.ts): nothing to compare
        }
        expect(comparedCases(runtime, suite), 'cases recorded on both binaries').to.be.greaterThan(0);
        const unexplained: string[] = [];
        const differing = differingCases(runtime, suite, ['anchor', 'lite']);
        for (const [title, d] of differing) {
          const row = knownDifference(runtime, suite, title);
          const why = row ? unlikeRow(row, d) : describeDifference(d, ['anchor', 'lite']);
          if (why.length > 0)
            unexplained.push(`${title}${row ? ' (listed, but not as it differs)' : ''}\n    ${why.join('\n    ')}`);
        }
        const stale = KNOWN_DIFFERENCES.filter(
          (d) => d.suite === suite && (d.runtime ?? runtime) === runtime && !differing.has(d.case),
        ).map((d) => d.case);
        expect(
          unexplained,
          `differences not in tests/programs/differences.ts:\n${unexplained.join('\n')}`,
        ).to.deep.equal([]);
        expect(stale, 'rows of tests/programs/differences.ts whose case no longer differs (remove them)').to.deep.equal(
          [],
        );
      });
    }
  });
}

export { DEV_ONLY_BINARIES_ENV };
