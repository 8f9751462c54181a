// The system layer of the seeded simulation (sim/chaos/): the real processes — the merchant API, two payout
// workers, the scanner, the webhook receiver, the outbox worker, `oncepay exception refund` — against a real
// PostgreSQL server (restarted, its sessions terminated) and the localnet (responses dropped, requests failed,
// blockhashes expired), with processes SIGKILLed at named failpoints or without warning, webhook events delivered
// again, the merchant endpoint failing; then the chain, the ledger and the merchant endpoint are checked against the
// invariants. Seeds 1 and 2 here (ONCEPAY_CHAOS_SEEDS=3,4 for others); `make chaos SEEDS=…` for longer runs.
import { expect } from 'chai';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { requireProgramSo } from '../../common/program-binary';
import { startLocalnet, type LocalnetHandle } from '../../localnet';
import { runChaos } from '../../sim/chaos/harness';
import { planChaos } from '../../sim/chaos/plan';

const SEEDS = (process.env.ONCEPAY_CHAOS_SEEDS ?? '1,2').split(',').map(Number);
/** Shorter than `make chaos`'s default: two runs must fit in a couple of minutes of make test. */
const PLAN = { windowMs: 15_000, faults: 10 };

describe('sim: the system layer (seeded chaos runs of the real processes)', function () {
  // Real processes, restarts and quiescence on a shared 2-core machine: no speed is asserted.
  this.timeout(900_000);
  let net: LocalnetHandle;

  before(async () => {
    net = await startLocalnet({
      slotMs: 100,
      finalityDepth: 3,
      wsOnNextPort: false,
      programs: [{ programId: ONCEPAY_PROGRAM_ID, path: requireProgramSo() }],
    });
  });
  after(async () => net?.stop());

  for (const seed of SEEDS) {
    it(`seed ${seed}: every invariant holds on the chain, the ledger and the merchant endpoint`, async () => {
      const r = await runChaos(planChaos(seed, PLAN), { net });
      const faults = Object.entries(r.injected)
        .map(([k, n]) => `${k} ×${n}`)
        .join(', ');
      console.log(
        `      chaos seed ${seed}: ${(r.ms / 1000).toFixed(0)} s; faults: ${faults}; died at: ${r.fired.join(', ') || 'none'}`,
      );
      expect(r.problems, `seed ${seed} (make chaos SEEDS=${seed}):\n${r.log.join('\n')}`).to.deep.equal([]);
    });
  }
});
