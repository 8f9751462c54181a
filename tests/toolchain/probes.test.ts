// Each probe is built by toolchain/sbf/build.sh (cached) and run in LiteSVM
// and solana-bankrun; the results are checked against the same computation
// done here with BigInt.
import { expect } from 'chai';
import { buildProbes, PROBE_IDS } from '../../testkit/toolchain/build';
import { le128, le64, reader, RUNTIMES, type Harness } from '../../testkit/toolchain/runtimes';

const M64 = 1n << 64n;
const u64 = (v: bigint) => BigInt.asUintN(64, v);
const u128 = (v: bigint) => BigInt.asUintN(128, v);
const i64 = (v: bigint) => BigInt.asIntN(64, v);
const i128 = (v: bigint) => BigInt.asIntN(128, v);
const i32 = (v: bigint) => BigInt.asIntN(32, v);
const rotl = (v: bigint, n: bigint) => u64((v << n) | (v >> (64n - n)));
// Rust's / and % truncate toward zero, like BigInt's.

const ID = PROBE_IDS;

// Rust's own output for these inputs (Display of f64/f32, saturating `as`,
// NaN compares unequal); the probe formats with core::fmt on soft floats.
const FLOAT_CASES: { a: bigint; b: bigint; c: number; want: string }[] = [
  { a: 7n, b: 2n, c: 2.5, want: 'x=5.5 xu=5 ci=2 cu=2 c8=2 lt=false eq=true f32=7 c3=2.500' },
  {
    a: 1n,
    b: 3n,
    c: -1e30,
    want:
      'x=0.75 xu=0 ci=-9223372036854775808 cu=0 c8=0 lt=false eq=true f32=1 ' +
      'c3=-1000000000000000019884624838656.000',
  },
  { a: 5n, b: 0n, c: NaN, want: 'x=inf xu=18446744073709551615 ci=0 cu=0 c8=0 lt=false eq=false f32=5 c3=NaN' },
  {
    a: 1000000n,
    b: 7n,
    c: 300.75,
    want: 'x=214285.96428571432 xu=214285 ci=300 cu=300 c8=255 lt=false eq=true f32=1000000 c3=300.750',
  },
  {
    a: 16777217n, // 2^24 + 1: not representable in f32
    b: 1n,
    c: 1e10,
    want: 'x=25165825.75 xu=25165825 ci=10000000000 cu=10000000000 c8=255 lt=true eq=true f32=16777216 c3=10000000000.000',
  },
];

function expectedCalls(v: bigint[]) {
  const w = [1n, 2n, 3n, 4n, 5n, 6n, 7n].reduce((acc, k, i) => u64(acc + v[i] * k), 0n);
  const x = v.slice(0, 7).reduce((acc, val, i) => acc ^ rotl(val, BigInt(i)), 0n);
  const wide = u128(((v[0] << 64n) | v[1]) + v[3] + (v[2] << 64n) + v[4]);
  const [q, r] = v[1] === 0n ? [M64 - 1n, v[0]] : [v[0] / v[1], v[0] % v[1]];
  const sub = v[0] >= v[1] ? [0, v[0] - v[1]] : [1, 7n];
  const odd = (v[7] & 1n) === 1n;
  const area = odd ? u64(v[4] * v[4]) : u64(v[2] * v[3]);
  const weighted = odd
    ? u64(area + (v[1] ^ v[2] ^ v[3] ^ v[4] ^ v[5] ^ v[6]))
    : u64(area + v[1] + v[2] + v[3] + v[4] + v[5] + v[6]);
  return { w, f: odd ? x : w, wide, q, r, sub, area, weighted, atomic: u64(v[5] + v[5] + v[6]) };
}

function expectedMath(x: bigint, y: bigint, p: bigint, q: bigint, m: bigint, n: bigint): Buffer {
  const parts: Buffer[] = [le64(x / y, x % y, i32(x) / i32(y), i32(x) % i32(y))];
  for (const v of [p + q, p * q, p / q, p % q, i128(x * i128(p)) / y, m * n]) parts.push(le128(v));
  const flag = (ok: boolean, v: bigint, bytes: 8 | 16) =>
    Buffer.concat([Buffer.from([ok ? 1 : 0]), bytes === 8 ? le64(ok ? v : 0n) : le128(ok ? v : 0n)]);
  parts.push(flag(p * q < 1n << 128n, p * q, 16));
  parts.push(flag(p + q < 1n << 128n, p + q, 16));
  parts.push(flag(m * n < M64, m * n, 8));
  parts.push(flag(m + n < M64, m + n, 8));
  parts.push(flag(x * y === i64(x * y), x * y, 8));
  const sp = i128(p),
    sq = i128(q);
  parts.push(flag(sp * sq === i128(sp * sq), sp * sq, 16));
  return Buffer.concat(parts);
}

function expectedMem(seed: number, len: number): Buffer {
  const N = 1024;
  const checksum = (b: Uint8Array) => b.reduce((acc, v, i) => u64(acc + BigInt(i + 1) * BigInt(v)), 0n);
  const a = new Uint8Array(N).fill(seed);
  for (let i = 0; i < N; i += 97) a[i] = (a[i] + i) & 0xff;
  const b = Uint8Array.from(a);
  const c1 = checksum(b);
  b.copyWithin(64, 0, len);
  const c2 = checksum(b);
  a.copyWithin(64, 0, len);
  const eq = a.every((v, i) => v === b[i]) ? 1 : 0;
  b[N - 1] = (b[N - 1] + 1) & 0xff;
  const cmp = Buffer.compare(Buffer.from(a), Buffer.from(b)) + 1;
  const prefixEq = a.subarray(0, N - 1).every((v, i) => v === b[i]) ? 1 : 0;
  return Buffer.concat([le64(c1, c2), Buffer.from([eq, cmp, prefixEq, b[seed]])]);
}

function expectedFmt(a: bigint, b: bigint): string {
  return (
    `sum=${u64(a + b)} neg=${-i64(a)} hex=0x${a.toString(16)} wide=${a * b * 1000n} ` +
    `pad=[${String(b % 1000n).padStart(6)}] dbg="tab\\tq\\""`
  );
}

describe('toolchain: probes built by build.sh run in both runtimes', function () {
  let paths: Record<string, string> = {};
  before(function () {
    this.timeout(600_000); // cold: builds core/alloc once, then each probe
    paths = buildProbes();
  });

  for (const runtime of RUNTIMES) {
    describe(runtime.name, () => {
      let h: Harness;
      before(async () => {
        h = await runtime.start(paths);
      });

      it('hello: logs and returns its instruction data reversed', async () => {
        const r = await h.invoke(ID.hello, Buffer.from('oncepay'));
        expect(r.error).to.equal(null);
        expect(r.logs).to.include('Program log: hello from the oncepay toolchain');
        expect(r.logs).to.include('Program log: target_os = solana');
        expect(r.returnData.toString()).to.equal('yapecno');
      });

      for (const v of [
        [100n, 7n, 3n, 4n, 5n, 6n, 9n, 1n],
        [M64 - 1n, 3n, 1n << 40n, 12345n, 77n, M64 - 5n, 1n << 63n, 0n],
        [5n, 9n, 2n, 2n, 2n, 2n, 2n, 3n],
      ]) {
        it(`calls: >5 args direct/indirect, u128 args, tuple/Result returns, dyn, atomics (${v[0]}, ${v[1]}, …)`, async () => {
          const r = await h.invoke(ID.calls, le64(...v));
          expect(r.error, r.logs.join('\n')).to.equal(null);
          const e = expectedCalls(v);
          const o = reader(r.returnData);
          expect(o.u64(), 'weigh7 (7 args)').to.equal(e.w);
          expect(o.u64(), 'fn pointer (7 args)').to.equal(e.f);
          expect(o.u128(), 'wide (u128 args)').to.equal(e.wide);
          expect([o.u64(), o.u64()], 'divmod tuple').to.deep.equal([e.q, e.r]);
          expect([o.u8(), o.u64()], 'Result').to.deep.equal(e.sub);
          expect(o.u64(), 'dyn area').to.equal(e.area);
          expect(o.u64(), 'dyn weighted (7 args incl. self)').to.equal(e.weighted);
          expect(o.u64(), 'atomic fetch_add').to.equal(e.atomic);
          expect(o.rest()).to.equal(0);
        });
      }

      const mathCases: bigint[][] = [
        [-100n, 7n, (1n << 128n) - 1n, 3n, M64 - 1n, 2n],
        [(1n << 63n) - 1n, -3n, 1n << 64n, (1n << 64n) + 1n, 1n << 32n, (1n << 32n) - 1n],
        [-7n, -2n, 123456789012345678901234567890n, 987654321n, 3n, 5n],
        [1n << 40n, -(1n << 30n), (1n << 127n) - 1n, 2n, M64 - 1n, M64 - 1n],
        [-(1n << 62n), 4n, 1n << 127n, (1n << 127n) + 12345n, 1n << 63n, 2n],
        // both u128 operands below 2^64: the narrow fast path of the division
        [-(1n << 40n), 3n, 10n ** 18n, 7n, 1n << 31n, 1n << 33n],
        [-(1n << 40n), 3n, M64 - 1n, M64 - 2n, 0n, M64 - 1n],
        // products landing exactly on i64::MIN / i128::MIN do not overflow
        [-(1n << 62n), 2n, 1n << 126n, (1n << 128n) - 2n, (1n << 32n) + 1n, (1n << 32n) - 1n],
      ];
      mathCases.forEach(([x, y, p, q, m, n], i) => {
        it(`math #${i}: signed div/rem, u128/i128 mul/div, checked ops (x=${x}, y=${y}, p=${p}, q=${q})`, async () => {
          const data = Buffer.concat([le64(x, y), le128(p), le128(q), le64(m, n)]);
          const r = await h.invoke(ID.math, data);
          expect(r.error, r.logs.join('\n')).to.equal(null);
          expect(r.returnData.toString('hex')).to.equal(expectedMath(x, y, p, q, m, n).toString('hex'));
        });
      });

      it('math: dividing by zero panics (the program fails, nothing returned)', async () => {
        const r = await h.invoke(ID.math, Buffer.concat([le64(5n, 0n), le128(1n), le128(1n), le64(1n, 1n)]));
        expect(r.error).to.not.equal(null);
        expect(r.logs).to.include('Program log: probe panicked');
      });

      for (const [seed, len] of [
        [5, 300],
        [255, 900],
        [0, 0],
      ]) {
        it(`mem: 1 KiB memset/memcpy/memmove/memcmp through syscalls (seed ${seed}, memmove ${len} bytes)`, async () => {
          const data = Buffer.concat([Buffer.from([0, seed]), le64(BigInt(len))]);
          const r = await h.invoke(ID.mem, data);
          expect(r.error, r.logs.join('\n')).to.equal(null);
          expect(r.returnData.toString('hex')).to.equal(expectedMem(seed, len).toString('hex'));
        });
      }

      it('mem: a 1 KiB memcpy is a syscall (tens of CU), not a byte loop (thousands)', async () => {
        const cu = async (mode: number) => {
          const r = await h.invoke(ID.mem, Buffer.from([mode, 7, 0, 0, 0, 0, 0, 0, 0, 0]));
          expect(r.error).to.equal(null);
          return r.computeUnits;
        };
        const baseline = await cu(3);
        const memcpy = (await cu(1)) - baseline;
        const loop = (await cu(2)) - baseline;
        // CU are deterministic; these bounds only tell the two code paths apart.
        expect(Number(memcpy)).to.be.lessThan(100);
        expect(Number(loop)).to.be.greaterThan(2048);
      });

      for (const { a, b, c, want } of FLOAT_CASES) {
        it(`float: soft-float arithmetic, compares, saturating casts, Display (${a}, ${b}, ${c})`, async () => {
          const cBits = Buffer.alloc(8);
          cBits.writeDoubleLE(c);
          const r = await h.invoke(ID.float, Buffer.concat([le64(a, b), cBits]));
          expect(r.error, r.logs.join('\n')).to.equal(null);
          expect(r.returnData.toString()).to.equal(want);
        });
      }

      for (const [a, b] of [
        [M64 - 1n, 123456n],
        [42n, 7n],
        [1n << 62n, 999999n],
      ]) {
        it(`fmt: core::fmt into a stack buffer (${a}, ${b})`, async () => {
          const r = await h.invoke(ID.fmt, le64(a, b));
          expect(r.error, r.logs.join('\n')).to.equal(null);
          const want = expectedFmt(a, b);
          expect(r.returnData.toString()).to.equal(want);
          expect(r.logs).to.include(`Program log: ${want}`);
        });
      }
    });
  }
});
