// THE table of every remaining difference between the Anchor program (programs/oncepay) and its lean twin
// (programs/oncepay-lite), as the differential suite observes it. A case listed here may differ between the two
// binaries (and only in the way `anchor` / `lite` say); any other difference fails the suite, and a row whose case
// no longer differs fails too, so the table stays true.
import type { RuntimeName } from '../../testkit/program/runtimes';

export interface KnownDifference {
  /** The suite (describeProgram title) and case title. */
  suite: string;
  case: string;
  /** Only in this runtime (both when absent). */
  runtime?: RuntimeName;
  /** What each binary answers. */
  anchor: string;
  lite: string;
  reason: string;
}

// Empty: the two binaries answer every case alike. (The last row, an on-curve op address, went when the Anchor program
// took the twin's address proof and left the off-curve part to the runtime as the twin does: programs/oncepay/src/pda.rs.)
export const KNOWN_DIFFERENCES: KnownDifference[] = [];

export function knownDifference(runtime: RuntimeName, suite: string, title: string): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((d) => d.suite === suite && d.case === title && (d.runtime ?? runtime) === runtime);
}
