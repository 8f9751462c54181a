// The oncepay-sbf opt pass, one rewrite at a time: each tests/toolchain/ir/*.ll
// is refused without the pass, by upstream LLVM's BPF backend or, when llc
// accepts it, by elf2sbf (the message in its `; upstream:` line), builds
// through `build.sh --ir`, computes its `; case:` results and fails for its
// `; aborts:` inputs through the runtime's abort syscall, in both runtimes.
import { expect } from 'chai';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { BUILD_SH, elf2sbf, LLVM_BIN, run, scratchDir } from '../../testkit/toolchain/build';
import { readElf } from './support/elf';
import { le64, RUNTIMES, type Harness } from '../../testkit/toolchain/runtimes';

const IR_DIR = join(__dirname, 'ir');

interface IrCase {
  file: string;
  name: string;
  upstream: RegExp;
  /** Syscalls the built .so must import (`; syscalls:` line), e.g. the mem rewrites. */
  syscalls: string[];
  cases: { args: bigint[]; want: bigint }[];
  /** Inputs for which the program must end through `abort` (`; aborts:` lines). */
  aborts: bigint[][];
}

function parseIr(file: string): IrCase {
  const text = readFileSync(file, 'utf8');
  const upstream = /^; upstream: (.+)$/m.exec(text);
  if (!upstream) throw new Error(`${file}: no '; upstream:' line`);
  const cases = [...text.matchAll(/^; case: ([-\d ]+) -> (-?\d+)$/gm)].map((m) => ({
    args: m[1].trim().split(/\s+/).map(BigInt),
    want: BigInt.asUintN(64, BigInt(m[2])),
  }));
  if (!cases.length) throw new Error(`${file}: no '; case:' line`);
  const syscalls = /^; syscalls: (.+)$/m.exec(text)?.[1].trim().split(/\s+/) ?? [];
  const aborts = [...text.matchAll(/^; aborts: ([-\d ]+)$/gm)].map((m) => m[1].trim().split(/\s+/).map(BigInt));
  return { file, name: basename(file, '.ll'), upstream: new RegExp(upstream[1]), syscalls, cases, aborts };
}

const IR = readdirSync(IR_DIR)
  .filter((f) => f.endsWith('.ll'))
  .sort()
  .map((f) => parseIr(join(IR_DIR, f)));

describe('toolchain: oncepay-sbf pass, one rewrite per IR file', function () {
  let dir: string;
  const ids: Record<string, string> = {};
  const programs: Record<string, string> = {};

  before(function () {
    this.timeout(600_000);
    dir = scratchDir('pass');
    for (const c of IR) {
      const out = join(dir, `${c.name}.so`);
      const r = run(BUILD_SH, ['--quiet', '--ir', c.file, '--out', out]);
      if (r.status !== 0) throw new Error(`build.sh --ir ${c.name} failed:\n${r.stderr}`);
      ids[c.name] = Keypair.generate().publicKey.toBase58();
      programs[ids[c.name]] = out;
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const c of IR) {
    it(`${c.name}: without the pass, upstream llc or elf2sbf refuses it (${c.upstream.source})`, () => {
      const bc = join(dir, `${c.name}.upstream.bc`);
      const obj = join(dir, `${c.name}.o`);
      const opt = run(join(LLVM_BIN, 'opt'), [
        '--internalize-public-api-list=entrypoint',
        '-passes=internalize,globaldce,default<O2>',
        c.file,
        '-o',
        bc,
      ]);
      expect(opt.status, opt.stderr).to.equal(0);
      const llc = run(join(LLVM_BIN, 'llc'), [
        '-march=bpfel',
        '-mcpu=v2',
        '-O2',
        '-bpf-stack-size=4096',
        '-filetype=obj',
        bc,
        '-o',
        obj,
      ]);
      const refusal = llc.status !== 0 ? llc : elf2sbf(obj, join(dir, `${c.name}.upstream.so`));
      expect(refusal.status).to.not.equal(0);
      expect(refusal.stderr).to.match(c.upstream);
    });
  }

  for (const c of IR.filter((x) => x.syscalls.length)) {
    it(`${c.name}: the built .so calls ${c.syscalls.join(', ')}`, () => {
      const imported = readElf(readFileSync(programs[ids[c.name]])).dynamicSymbols;
      expect(imported).to.include.members(c.syscalls);
    });
  }

  for (const runtime of RUNTIMES) {
    describe(runtime.name, () => {
      let h: Harness;
      before(async () => {
        h = await runtime.start(programs);
      });
      for (const c of IR) {
        it(`${c.name}: with the pass, ${c.cases.map((k) => `(${k.args.join(', ')}) → ${k.want}`).join('; ')}`, async () => {
          for (const k of c.cases) {
            const r = await h.invoke(ids[c.name], le64(...k.args));
            expect(r.error, r.logs.join('\n')).to.equal(null);
            expect(r.returnData.readBigUInt64LE(0), `${c.name}(${k.args.join(', ')})`).to.equal(k.want);
          }
        });
      }
      for (const c of IR.filter((x) => x.aborts.length)) {
        it(`${c.name}: with the pass, ${c.aborts.map((a) => `(${a.join(', ')})`).join('; ')} end through abort`, async () => {
          for (const args of c.aborts) {
            const r = await h.invoke(ids[c.name], le64(...args));
            expect(r.ok, `${c.name}(${args.join(', ')})`).to.equal(false);
            expect(r.logs.join('\n')).to.include('failed: SBF program panicked');
          }
        });
      }
    });
  }
});
