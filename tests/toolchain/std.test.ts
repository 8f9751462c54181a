// std on the SBF target: toolchain/sbf/probes/std uses Vec, String, format!,
// BTreeMap, HashMap and Box<dyn Trait> from the patched std
// (toolchain/sbf/std/solana-std.patch) and ends early in each way std can
// (a formatted panic, an index out of bounds, panic_any, an allocation past
// the heap). Built by build.sh, run in LiteSVM and solana-bankrun; the summary
// line is recomputed here, and each failure's message must be in the logs.
import { expect } from 'chai';
import { buildProbe } from '../../testkit/toolchain/build';
import { RUNTIMES, type Harness } from '../../testkit/toolchain/runtimes';

const ID = 'StdProbe11111111111111111111111111111111111';
const M64 = 1n << 64n;

function data(mode: number, n: bigint, seed: bigint): Buffer {
  const b = Buffer.alloc(17);
  b[0] = mode;
  b.writeBigUInt64LE(n, 1);
  b.writeBigUInt64LE(seed, 9);
  return b;
}

/** What the probe's `summary(n, seed)` computes (toolchain/sbf/probes/std/src/lib.rs). */
function expectedSummary(n: bigint, seed: bigint): string {
  const values: bigint[] = [];
  for (let i = 1n; i <= n; i++) values.push(((((seed * i) % M64) + i * i) % M64) % 1000n);
  values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const byRem = new Map<bigint, number>();
  for (const v of values) byRem.set(v % 7n, (byRem.get(v % 7n) ?? 0) + 1);
  const counts = [...byRem.keys()]
    .sort((a, b) => Number(a - b))
    .map((k) => `${k}:${byRem.get(k)}`)
    .join(',');
  const sums = new Map<string, bigint>();
  for (const v of values) sums.set(`k${v % 5n}`, (sums.get(`k${v % 5n}`) ?? 0n) + v);
  const hashed = [...sums.keys()]
    .sort()
    .map((k) => `${k}=${sums.get(k)}`)
    .join(',');
  const sides = values.slice(0, 3).map((v) => v % 10n);
  const area = sides.reduce((acc, s) => acc + s * s + s * 3n, 0n);
  const shapes = sides.map((s) => `square${s}+rect${s}x3`).join('+');
  const text = [...seed.toString(16)].reverse().join('').toUpperCase();
  return `sorted=[${values.join(', ')}] counts=${counts} sums=${hashed} area=${area} shapes=${shapes} text=${text}`;
}

const SUMMARIES: [bigint, bigint][] = [
  [12n, 123456789n],
  [40n, M64 - 1n], // wrapping multiply
  [3n, 0xdeadbeefn],
  [0n, 0n], // empty collections
];

describe('toolchain: std probe (collections, formatting, dyn, panics) in both runtimes', function () {
  let so = '';
  before(function () {
    this.timeout(900_000); // cold: the pass plugin and std itself
    so = buildProbe('std');
  });

  for (const runtime of RUNTIMES) {
    describe(runtime.name, () => {
      let h: Harness;
      before(async () => {
        h = await runtime.start({ [ID]: so });
      });

      for (const [n, seed] of SUMMARIES) {
        it(`Vec/String/format!/BTreeMap/HashMap/Box<dyn>: n=${n} seed=${seed}`, async () => {
          const r = await h.invoke(ID, data(0, n, seed));
          expect(r.error, r.logs.join('\n')).to.equal(null);
          const want = expectedSummary(n, seed);
          expect(r.returnData.toString()).to.equal(want);
          expect(r.logs).to.include(`Program log: ${want}`);
        });
      }

      const failures: [string, number, bigint, bigint, RegExp][] = [
        [
          'panic! with a formatted message',
          1,
          7n,
          42n,
          /panicked at src\/lib\.rs:\d+:\d+:\nprobe-std refuses seed 42 \(n = 7\)/,
        ],
        [
          'index out of bounds',
          2,
          3n,
          9n,
          /panicked at src\/lib\.rs:\d+:\d+:\nindex out of bounds: the len is 3 but the index is 9/,
        ],
        ['std::panic::panic_any', 3, 0n, 77n, /panicked at src\/lib\.rs:\d+:\d+:\npanic_any with seed 77/],
        ['an allocation past the 32 KiB heap', 4, 40n, 0n, /memory allocation failed, out of memory/],
      ];
      for (const [what, mode, n, seed, message] of failures) {
        it(`${what}: the message is in the logs, then the program fails`, async () => {
          const r = await h.invoke(ID, data(mode, n, seed));
          expect(r.ok).to.equal(false);
          const logs = r.logs.join('\n');
          expect(logs).to.match(message);
          expect(logs).to.include('failed: SBF program panicked');
        });
      }
    });
  }
});
