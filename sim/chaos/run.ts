// `make chaos SEEDS=1,2,3`: the system layer, one seeded chaos run of the real processes per seed (sim/chaos/
// harness.ts), each checked against the invariants. A failing seed is printed with what broke and the run's log.
import { Command } from 'commander';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { requireProgramSo } from '../../common/program-binary';
import { startLocalnet } from '../../localnet';
import { runChaos } from './harness';
import { DEFAULT_PLAN, planChaos } from './plan';
import { OncepayError, SIM_CODES } from '../../common/errors';

function seedsOf(v: string): number[] {
  const out: number[] = [];
  for (const part of v.split(',')) {
    const [a, b] = part.split('-').map((x) => Number(x.trim()));
    if (!Number.isSafeInteger(a) || (b !== undefined && !Number.isSafeInteger(b)))
      throw new OncepayError(SIM_CODES.OPTION_INVALID, `seeds are integers or ranges (1,2,5-9), got ${v}`);
    for (let s = a; s <= (b ?? a); s++) out.push(s);
  }
  return out;
}

async function main(argv: string[]): Promise<number> {
  const o = new Command()
    .name('chaos')
    .description('seeded chaos runs of the real oncepay processes against PostgreSQL and the localnet')
    .option('--seeds <list>', 'seeds to run: 1,2,5-9', '1')
    .option('--window-ms <ms>', 'how long the faults go on', String(DEFAULT_PLAN.windowMs))
    .option('--faults <n>', 'faults per run', String(DEFAULT_PLAN.faults))
    .option('--verbose', 'print the log of every run as it happens')
    .parse(argv)
    .opts<{ seeds: string; windowMs: string; faults: string; verbose?: boolean }>();
  const seeds = seedsOf(o.seeds);
  const net = await startLocalnet({
    slotMs: 100,
    finalityDepth: 3,
    wsOnNextPort: false,
    programs: [{ programId: ONCEPAY_PROGRAM_ID, path: requireProgramSo() }],
  });
  const failed: number[] = [];
  try {
    for (const seed of seeds) {
      const plan = planChaos(seed, { windowMs: Number(o.windowMs), faults: Number(o.faults) });
      const r = await runChaos(plan, { net, say: o.verbose ? (l) => console.log(`  [${seed}] ${l}`) : undefined });
      const faults = Object.entries(r.injected)
        .map(([k, n]) => `${k} ×${n}`)
        .join(', ');
      console.log(
        `chaos seed ${seed}: ${r.problems.length === 0 ? 'every invariant held' : `${r.problems.length} broken`} ` +
          `(${(r.ms / 1000).toFixed(0)} s; faults: ${faults}; died at failpoints: ${r.fired.join(', ') || 'none'})`,
      );
      if (r.problems.length > 0) {
        failed.push(seed);
        for (const p of r.problems) console.log(`  BROKEN ${p}`);
        if (!o.verbose) for (const l of r.log) console.log(`  ${l}`);
      }
    }
  } finally {
    await net.stop();
  }
  if (failed.length > 0)
    console.log(`chaos: failing seeds ${failed.join(',')} (replay: make chaos SEEDS=${failed.join(',')})`);
  return failed.length === 0 ? 0 : 1;
}

// A SIGINT or SIGTERM (Ctrl-C, a timeout) ends the run through 'exit', where the processes it started are killed.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

main(process.argv).then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(e.stack ?? e.message);
    process.exit(2);
  },
);
