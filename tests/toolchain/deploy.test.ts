// Deploy-time verification: programs built here go through the BPF
// upgradeable loader (buffer, write, deploy with max data len), which runs
// the loader's strict ELF checks and the verifier; broken objects fail there
// or are refused earlier by elf2sbf.
import { expect } from 'chai';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildOncepay, buildProbe, elf2sbf, llc, scratchDir, WORK } from '../../testkit/toolchain/build';
import type { Deployed } from '../../testkit/toolchain/litesvm-run';
import { le128, le64, reader, RUNTIMES, type Harness } from '../../testkit/toolchain/runtimes';

describe('toolchain: deploy through the upgradeable loader', function () {
  let dir: string;
  let callsSo: string;
  let mathSo: string;
  let oncepaySo: string;
  let jmp32So: string;
  let typoSo: string;

  before(function () {
    this.timeout(600_000);
    dir = scratchDir('deploy');
    callsSo = buildProbe('calls');
    mathSo = buildProbe('math');
    const helloSo = buildProbe('hello');
    oncepaySo = buildOncepay();

    // Same probe, compiled for BPF v3: llc emits JMP32, which SBPF v0 lacks.
    const v3 = join(dir, 'hello-v3.o');
    llc(join(WORK, 'probe_hello/opt.bc'), v3, 'v3');
    const refused = elf2sbf(v3, join(dir, 'refused.so'));
    expect(refused.status).to.equal(2);
    expect(refused.stderr).to.include('ONCEPAY__SBF__JMP32');
    jmp32So = join(dir, 'hello-v3.so');
    expect(elf2sbf(v3, jmp32So, true).status).to.equal(0);

    // A misspelt syscall: only the loader can tell (it hashes the name).
    const hello = readFileSync(helloSo);
    expect(hello.indexOf('sol_log_\0')).to.be.greaterThan(0);
    typoSo = join(dir, 'hello-typo.so');
    writeFileSync(typoSo, Buffer.from(hello.toString('latin1').replace('sol_log_\0', 'sol_lxg_\0'), 'latin1'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const runtime of RUNTIMES) {
    describe(runtime.name, () => {
      // One harness per runtime, every program deployed up front (each at its own new address): a bankrun bank is
      // never freed (threads), and bankrun 0.4 stalls on a warp once a program deployed by a transaction has run.
      let h: Harness;
      const deployed: Record<string, Deployed> = {};
      before(async () => {
        h = await runtime.start();
        const elfs: Record<string, string> = {
          calls: callsSo,
          math: mathSo,
          'oncepay.so': join(dirname(oncepaySo), 'oncepay.so'),
          'oncepay_lite.so': join(dirname(oncepaySo), 'oncepay_lite.so'),
          jmp32: jmp32So,
          typo: typoSo,
        };
        const names = Object.keys(elfs);
        const results = await h.deployAll(names.map((n) => readFileSync(elfs[n])));
        names.forEach((n, i) => (deployed[n] = results[i]));
      });

      it('deploys the calls probe and runs it from the deployed program account', async () => {
        const d = deployed.calls;
        expect(d.failure?.logs ?? null).to.equal(null);
        const r = await h.invoke(d.programId, le64(100n, 7n, 3n, 4n, 5n, 6n, 9n, 1n));
        expect(r.error, r.logs.join('\n')).to.equal(null);
        const o = reader(r.returnData);
        expect(o.u64()).to.equal(263n); // 100 + 2*7 + 3*3 + 4*4 + 5*5 + 6*6 + 7*9
      });

      it('deploys the math probe (i128 expansions, syscalls for panics) and runs it', async () => {
        const d = deployed.math;
        expect(d.failure?.logs ?? null).to.equal(null);
        const r = await h.invoke(
          d.programId,
          Buffer.concat([le64(-100n, 7n), le128(10n ** 30n), le128(7n), le64(1n, 2n)]),
        );
        expect(r.error, r.logs.join('\n')).to.equal(null);
        const o = reader(r.returnData);
        expect([o.u64(), o.u64()]).to.deep.equal([BigInt.asUintN(64, -14n), BigInt.asUintN(64, -2n)]);
      });

      for (const so of ['oncepay.so', 'oncepay_lite.so']) {
        it(`deploys target/deploy/${so} (make program) and executes it`, async () => {
          const d = deployed[so];
          expect(d.failure?.logs ?? null).to.equal(null);
          // No instruction data: the program runs and rejects it with its own error.
          const r = await h.invoke(d.programId, new Uint8Array());
          expect(r.logs[0]).to.equal(`Program ${d.programId} invoke [1]`);
          expect(r.logs.some((l) => /consumed \d+ of \d+ compute units/.test(l))).to.equal(true);
          expect(String(r.error)).to.match(/Custom|custom program error/);
        });
      }

      it('the loader rejects at deploy a .so with JMP32 opcodes (forced past elf2sbf)', async () => {
        const d = deployed.jmp32;
        expect(d.failure).to.not.equal(null);
        expect(d.failure!.logs.join('\n')).to.match(
          /unknown eBPF opcode 0x(16|26|36|56|66|a6|b6|c6|d6|1e|2e|3e|5e|6e|ae|be|ce|de)/i,
        );
      });

      it('the loader rejects at deploy a .so calling an unknown syscall', async () => {
        const d = deployed.typo;
        expect(d.failure).to.not.equal(null);
        expect(d.failure!.logs.join('\n')).to.include('Unresolved symbol (sol_lxg_)');
      });
    });
  }
});
