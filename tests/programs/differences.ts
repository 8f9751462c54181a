// THE table of every remaining difference between the Anchor program (programs/oncepay) and its lean twin
// (programs/oncepay-lite), as the differential suite observes it. A case listed here may differ between the two
// binaries (and only in the way `anchor` / `lite` say); any other difference fails the suite, and a row whose case
// no longer differs fails too, so the table stays true.
import type { ProgramBinary } from '../../common/program-binary';
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

export const ON_CURVE_CASE = 'an on-curve address for a bump above the canonical one → refused, nothing created';

export const KNOWN_DIFFERENCES: KnownDifference[] = [
  {
    suite: 'program execute_payout',
    case: ON_CURVE_CASE,
    anchor:
      'ConstraintSeeds (2006): `seeds = [...], bump = op_bump` calls create_program_address, which refuses an on-curve hash',
    lite: 'the runtime refuses the op-seeded CreateAccount signer ("Could not create program address with signer seeds")',
    reason:
      'the twin proves only that the address is the hash of the seeds with op_bump and leaves the off-curve part to ' +
      'the runtime, which checks it when it derives the signer of the same instruction: re-checking would cost 159 CU ' +
      '(sol_curve_validate_point) on every payout. Either way the instruction fails and nothing is created or moved.',
  },
];

export function knownDifference(runtime: RuntimeName, suite: string, title: string): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((d) => d.suite === suite && d.case === title && (d.runtime ?? runtime) === runtime);
}

/** The answer a known difference gives `binary` (for a test that asserts it). */
export function answerOf(d: KnownDifference, binary: ProgramBinary): string {
  return binary === 'anchor' ? d.anchor : d.lite;
}
