// elf2sbf: crafted relocatable BPF objects (assembled with llvm-mc) are either
// turned into a loadable SBPF v0 .so or refused with a specific code.
import { expect } from 'chai';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assemble, elf2sbf, run, scratchDir } from '../../testkit/toolchain/build';
import { readElf } from './support/elf';
import { createLiteSvm } from '../../testkit/toolchain/litesvm-run';

const ENTRY = '\t.text\n\t.globl entrypoint\nentrypoint:\n';
const EXIT = '\tr0 = 0\n\texit\n';

// Calls across two text sections, a function address through lddw + callx,
// and 64-bit pointers inside .data.rel.ro (vtable-like).
const GOOD = `
	.section .text.unlikely.,"ax",@progbits
helper:
	r1 = msg ll
	r2 = 5
	call sol_log_
	exit
${ENTRY}	call helper
	r3 = helper ll
	callx r3
	r1 = table ll
	r1 = *(u64 *)(r1 + 8)
	r2 = 3
	call sol_log_
${EXIT}
	.section .rodata,"a",@progbits
msg:
	.ascii "hello"
	.section .data.rel.ro,"aw",@progbits
	.p2align 3
table:
	.quad msg
	.quad msg+2
`;

describe('toolchain: elf2sbf converter', function () {
  let dir: string;
  before(() => {
    dir = scratchDir('elf2sbf');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('links text sections, lddw/ABS64 addresses, callx and syscalls into a loadable .so', async () => {
    const obj = assemble(dir, 'good', GOOD);
    const out = join(dir, 'good.so');
    const r = elf2sbf(obj, out);
    expect(r.status, r.stderr).to.equal(0);

    const so = readFileSync(out);
    const elf = readElf(so);
    expect(elf.type).to.equal(3); // ET_DYN
    expect(elf.machine).to.equal(247); // EM_BPF
    expect(elf.flags).to.equal(0); // SBPF v0
    expect(elf.sections.filter((s) => s.flags & 4n).map((s) => s.name)).to.deep.equal(['.text']);
    expect(elf.sections.map((s) => s.name)).to.include.members([
      '.rodata',
      '.dynamic',
      '.dynsym',
      '.dynstr',
      '.rel.dyn',
    ]);
    for (const s of elf.sections.filter((x) => x.flags & 2n)) expect(s.addr, s.name).to.equal(s.offset);
    expect(elf.dynamicSymbols).to.deep.equal(['entrypoint', 'sol_log_']);
    const text = elf.sections.find((s) => s.name === '.text')!;
    expect(elf.entry >= text.offset && elf.entry < text.offset + text.size).to.equal(true);

    // Deploy through the upgradeable loader (deploy-time verification), then run.
    const h = await createLiteSvm();
    const deployed = await h.deployUpgradeable(so);
    expect(deployed.failure?.logs ?? null).to.equal(null);
    const res = await h.invoke(deployed.programId, new Uint8Array());
    expect(res.error).to.equal(null);
    expect(res.logs.filter((l) => l.startsWith('Program log:'))).to.deep.equal([
      'Program log: hello', // direct call into .text.unlikely.
      'Program log: hello', // callx through an lddw'd function address
      'Program log: llo', // pointer read from .data.rel.ro (msg + 2)
    ]);
  });

  const refusals: { name: string; source: string; code: string; mcpu?: string }[] = [
    { name: 'jmp32', source: `${ENTRY}\tif w1 > 3 goto +1\n${EXIT}`, code: 'ONCEPAY__SBF__JMP32', mcpu: 'v3' },
    {
      name: 'atomic',
      source: `${ENTRY}\tlock *(u64 *)(r1 + 0) += r2\n${EXIT}`,
      code: 'ONCEPAY__SBF__BAD_OPCODE',
      mcpu: 'v3',
    },
    { name: 'signed-div', source: `${ENTRY}\tr1 s/= r2\n${EXIT}`, code: 'ONCEPAY__SBF__BAD_OPCODE', mcpu: 'v4' },
    { name: 'div-by-zero', source: `${ENTRY}\tr1 /= 0\n${EXIT}`, code: 'ONCEPAY__SBF__DIVISION_BY_ZERO' },
    {
      name: 'writable-data',
      source: `${ENTRY}${EXIT}\t.data\n\t.p2align 3\ncounter:\n\t.quad 1\n`,
      code: 'ONCEPAY__SBF__WRITABLE_SECTION',
    },
    {
      name: 'bss',
      source: `${ENTRY}${EXIT}\t.bss\n\t.p2align 3\nzeroes:\n\t.zero 64\n`,
      code: 'ONCEPAY__SBF__WRITABLE_SECTION',
    },
    {
      name: 'libcall',
      source: `${ENTRY}\tcall memcpy\n${EXIT}`,
      code: 'ONCEPAY__SBF__UNDEFINED_SYMBOL',
    },
    {
      name: 'abs32-relocation',
      source: `${ENTRY}${EXIT}\t.section .rodata,"a",@progbits\nmsg:\n\t.ascii "hi"\n\t.p2align 2\nptr:\n\t.long msg\n`,
      code: 'ONCEPAY__SBF__BAD_RELOCATION',
    },
    {
      name: 'call-into-data',
      source: `${ENTRY}\tcall msg\n${EXIT}\t.section .rodata,"a",@progbits\nmsg:\n\t.ascii "hi"\n`,
      code: 'ONCEPAY__SBF__BAD_RELOCATION',
    },
    { name: 'no-entrypoint', source: `\t.text\nmain:\n${EXIT}`, code: 'ONCEPAY__SBF__NO_ENTRYPOINT' },
  ];

  for (const t of refusals) {
    it(`refuses ${t.name} with ${t.code}`, () => {
      const obj = assemble(dir, t.name, t.source, t.mcpu);
      const out = join(dir, `${t.name}.so`);
      const r = elf2sbf(obj, out);
      expect(r.status, r.stderr).to.equal(2);
      expect(r.stderr).to.include(t.code);
      expect(() => readFileSync(out)).to.throw(); // nothing half-written
    });
  }

  it("names custom_panic (std's panic handler calls it) as the program's to define, not as a missed libcall", () => {
    const obj = assemble(dir, 'no-custom-panic', `${ENTRY}\tcall custom_panic\n${EXIT}`);
    const r = elf2sbf(obj, join(dir, 'no-custom-panic.so'));
    expect(r.status).to.equal(2);
    expect(r.stderr).to.include('ONCEPAY__SBF__UNDEFINED_SYMBOL');
    expect(r.stderr).to.include('#[no_mangle] fn custom_panic');
    expect(r.stderr).to.not.include('libcall');
  });

  it('refuses an object that is not BPF', () => {
    const src = join(dir, 'host.s');
    writeFileSync(src, '\t.text\n\t.globl entrypoint\nentrypoint:\n\tret\n');
    const obj = join(dir, 'host.o');
    const mc = run('/usr/lib/llvm-22/bin/llvm-mc', ['-triple', 'x86_64-linux-gnu', '-filetype=obj', src, '-o', obj]);
    expect(mc.status, mc.stderr).to.equal(0);
    const r = elf2sbf(obj, join(dir, 'host.so'));
    expect(r.status).to.equal(2);
    expect(r.stderr).to.include('ONCEPAY__SBF__NOT_BPF');
  });

  it('--unchecked writes the .so anyway, with a warning per refusal (for loader tests only)', () => {
    const obj = assemble(dir, 'jmp32-unchecked', `${ENTRY}\tif w1 > 3 goto +1\n${EXIT}`, 'v3');
    const out = join(dir, 'jmp32-unchecked.so');
    const r = elf2sbf(obj, out, true);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.include('warning: ONCEPAY__SBF__JMP32');
    expect(readElf(readFileSync(out)).type).to.equal(3);
  });
});
