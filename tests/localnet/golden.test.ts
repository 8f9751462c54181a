// Golden responses: the golden scenario (testkit/golden/scenario.ts) run on localnet, compared field by field with
// what a real solana-test-validator 3.1.4 answered to the same scenario (tests/fixtures/golden/validator.json,
// recorded by scripts/record-golden.ts). Every difference is either fixed in localnet or listed below, with its
// reason, as in localnet/README.md "Known differences".
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { LocalnetHandle, ONCEPAY_PROGRAM_ID, startLocalnet } from '../../localnet';
import { requireProgramSo } from '../../common/program-binary';
import { KnownDifference, compareRecordings, unexplained } from '../../testkit/golden/compare';
import { Recording, runGoldenScenario } from '../../testkit/golden/scenario';

const FIXTURE = path.resolve(__dirname, '../fixtures/golden/validator.json');

/** Differences between localnet and the validator the project accepts (localnet/README.md says the same). */
export const KNOWN_DIFFERENCES: KnownDifference[] = [
  {
    // The first payer notification is the airdrop: localnet's faucet transfer carries a ComputeBudget instruction
    // (two equal airdrops in one slot get different signatures), a validator's faucet sends a bare System transfer.
    path: /^notifications\.logsSubscribe:mentions-payer\.messages\[0\]\.params\.result\.value\.logs/,
    reason: "the faucet's own transaction",
  },
];

async function onLocalnet(): Promise<Recording> {
  // The validator's shape: the legacy token program, the program in genesis, finality ~32 slots behind.
  const net: LocalnetHandle = await startLocalnet({
    slotMs: 100,
    finalityDepth: 32,
    wsOnNextPort: false,
    tokenProgram: 'legacy',
    programs: [{ programId: ONCEPAY_PROGRAM_ID, path: requireProgramSo() }],
  });
  try {
    return await runGoldenScenario({ url: net.url, wsUrl: net.wsUrl, programId: ONCEPAY_PROGRAM_ID });
  } finally {
    await net.stop();
  }
}

describe('localnet: golden responses (the same scenario as on solana-test-validator 3.1.4)', function () {
  let local: Recording;

  before(async () => {
    local = await onLocalnet();
  });

  it('run twice on localnet, only the values that must differ differ (the comparison names them all)', async () => {
    const again = await onLocalnet();
    const diffs = compareRecordings(local, again);
    expect(diffs, JSON.stringify(diffs.slice(0, 10), null, 2)).to.deep.equal([]);
    expect(Object.keys(local.exchanges).length).to.be.greaterThan(30);
  });

  it('a changed or missing field is a difference, by its path; a different signature or slot is not', () => {
    const copy = JSON.parse(JSON.stringify(local)) as Recording;
    const meta = (copy.exchanges['getTransaction:payout:json'].response.result as { meta: Record<string, unknown> })
      .meta;
    meta.costUnits = (meta.costUnits as number) + 1;
    delete meta.computeUnitsConsumed;
    const got = copy.exchanges['getTransaction:transfer:json'].response.result as { slot: number };
    got.slot += 1;
    const at = 'exchanges.getTransaction:payout:json.response.result.meta';
    expect(compareRecordings(local, copy).map((d) => d.path)).to.deep.equal([
      `${at}.computeUnitsConsumed`,
      `${at}.costUnits`,
    ]);
  });

  it('matches the validator field by field, but for the known differences', function () {
    if (!fs.existsSync(FIXTURE)) {
      console.log(`      no ${path.relative(process.cwd(), FIXTURE)}: record it with scripts/record-golden.ts`);
      this.skip();
    }
    const golden = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as Recording;
    const diffs = compareRecordings(golden, local);
    const left = unexplained(diffs, KNOWN_DIFFERENCES);
    expect(left, JSON.stringify(left, null, 2)).to.deep.equal([]);
  });
});
