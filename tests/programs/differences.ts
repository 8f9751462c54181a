// THE table of every difference between the Anchor program (programs/oncepay) and its lean twin
// (programs/oncepay-lite), as the differential suite observes it (testkit/program/differential.ts: every case of every
// suite in tests/programs runs on both binaries, in both runtimes, and what each did is recorded). A case listed here
// may differ between the two binaries, and only in the way its row says: the differing transactions answered
// `anchor` on the Anchor program and `lite` on the twin, and every account is left the same. Any other difference
// fails the suite's comparison test, and so does a row whose case no longer differs, so the table stays true.
import type { CaseDifference } from '../../testkit/program/differential';
import type { RuntimeName } from '../../testkit/program/runtimes';

export interface KnownDifference {
  /** The suite (describeProgram title) and case title. */
  suite: string;
  case: string;
  /** Only in this runtime (both when absent). */
  runtime?: RuntimeName;
  /**
   * What each binary answers in every transaction where they differ (differential.ts answerOf): `ok`, the Anchor error
   * the logs name as `Name (number)`, or `runtime: <the runtime's error text>` (a pattern, as bankrun and LiteSVM word
   * the same error differently).
   */
  anchor: string | RegExp;
  lite: string | RegExp;
  /** Set (to say why) when the accounts the case leaves may differ too: one binary paid where the other refused. */
  accountsDiffer?: string;
  reason: string;
}

export const KNOWN_DIFFERENCES: KnownDifference[] = [
  {
    suite: 'program execute_payout',
    case: 'an on-curve address for a bump above the canonical one → refused, nothing created',
    anchor: 'ConstraintSeeds (2006)',
    lite: /^runtime: .*(ProgramFailedToComplete|Program failed to complete)/,
    reason:
      'The Anchor program proves the op address with `seeds = [..], bump = op_bump` (create_program_address), which ' +
      'refuses an on-curve hash. The twin proves it with one sha256 and leaves the off-curve part to the runtime, ' +
      'which refuses to sign the op-seeded CreateAccount for an on-curve address ("Could not create program address ' +
      'with signer seeds") before anything is created or moved. Checking the curve itself would cost the twin 159 CU ' +
      'on every payout, which its 4,800 CU average cannot take. Both refuse; nothing is created or moved.',
  },
  {
    suite: 'program errors as Anchor answers them',
    case: 'an exemption threshold other than 2.0 or 1.0: the Anchor program funds Rent::minimum_balance, the twin refuses',
    runtime: 'litesvm',
    anchor: 'ok',
    lite: 'UnsupportedRentSysvar (6020)',
    accountsDiffer: 'the Anchor program paid: the op account exists and the tokens moved; the twin moved nothing',
    reason:
      'Only a Rent sysvar no cluster has (threshold 1.5; 2.0 today, 1.0 after SIMD-0194). The Anchor program funds ' +
      'Rent::minimum_balance (f64, as `init` does) and pays; the twin computes rent with integer math for 2.0 and ' +
      '1.0 only and refuses anything else rather than round.',
  },
  {
    suite: 'program errors as Anchor answers them',
    case: 'an exemption threshold other than 2.0 or 1.0: the Anchor program funds Rent::minimum_balance, the twin refuses',
    runtime: 'bankrun',
    anchor: /^runtime: .*insufficient funds for rent/i,
    lite: 'UnsupportedRentSysvar (6020)',
    reason:
      'The same two rent rules as in LiteSVM; bankrun moves only the sysvar, so the bank (still at 2.0) refuses the ' +
      'account the Anchor program funded for 1.5 years, after the program ran. Both refuse; nothing is created.',
  },
  {
    suite: 'program errors as Anchor answers them',
    case: 'a rent rate whose minimum overflows u64: refused, nothing moves',
    runtime: 'bankrun',
    anchor: /^runtime: .*(ProgramFailedToComplete|Program failed to complete)/,
    lite: 'ArithmeticOverflow (6021)',
    reason:
      "Only a Rent sysvar no cluster has. Rent::minimum_balance multiplies without a check, and the release profile's " +
      'overflow checks turn that into a panic; the twin multiplies with checked arithmetic and names the error. Both ' +
      'refuse; nothing moves. (LiteSVM cannot run this case: its own rent computation panics on such a sysvar.)',
  },
];

export function knownDifference(runtime: RuntimeName, suite: string, title: string): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((d) => d.suite === suite && d.case === title && (d.runtime ?? runtime) === runtime);
}

function matches(expected: string | RegExp, answer: string): boolean {
  return typeof expected === 'string' ? answer === expected : expected.test(answer);
}

/**
 * Why a listed case's difference is not the one its row states (empty when it is): an account that differs, a
 * transaction whose answers are not the row's, or a case that ran on one binary only.
 */
export function unlikeRow(row: KnownDifference, d: CaseDifference): string[] {
  if (d.onlyOn) return [`ran on ${d.onlyOn} only`];
  const out: string[] = row.accountsDiffer
    ? []
    : d.accounts.map((a) => `account ${a.index} differs: the row allows transaction answers only`);
  for (const t of d.transactions) {
    const [anchor, lite] = t.answers;
    if (!matches(row.anchor, anchor) || !matches(row.lite, lite))
      out.push(
        `transaction ${t.index}: anchor answered ${anchor}, lite ${lite}; the row says ${row.anchor} / ${row.lite}`,
      );
  }
  return out;
}
