// Builds probes and crafted objects for the toolchain tests (idempotent: the
// build script keeps a stamp per output and rebuilds only on change).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');
export const BUILD_SH = join(ROOT, 'toolchain/sbf/build.sh');
export const ELF2SBF = join(ROOT, 'toolchain/sbf/elf2sbf/elf2sbf.py');
export const LLVM_BIN = '/usr/lib/llvm-22/bin';
export const PROBES_OUT = join(ROOT, 'target/sbf/probes');
export const WORK = join(ROOT, 'target/sbf/work');

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[]): CommandResult {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Runs build.sh; throws with its output when it fails. */
export function buildCrate(crateDir: string, out: string, extra: string[] = []): CommandResult {
  const r = run(BUILD_SH, ['--crate', crateDir, '--out', out, ...extra]);
  if (r.status !== 0) throw new Error(`build.sh failed for ${crateDir}:\n${r.stderr}`);
  return r;
}

/** Builds toolchain/sbf/probes/<name> and returns the path of its `.so`. */
export function buildProbe(name: string): string {
  const out = join(PROBES_OUT, `${name}.so`);
  buildCrate(join(ROOT, 'toolchain/sbf/probes', name), out);
  return out;
}

/** The probes (toolchain/sbf/probes minus `rt`, their shared runtime) and the program id each is loaded at. */
export const PROBE_IDS = {
  hello: 'Hc1oProbe1111111111111111111111111111111111',
  calls: 'Ca11sProbe111111111111111111111111111111111',
  math: 'MathProbe1111111111111111111111111111111111',
  mem: 'MemProbe11111111111111111111111111111111111',
  fmt: 'FmtProbe11111111111111111111111111111111111',
  float: 'F1oatProbe111111111111111111111111111111111',
} as const;

/** Builds every probe; returns program id -> `.so` path, as `Runtime.start` takes it. */
export function buildProbes(): Record<string, string> {
  const paths: Record<string, string> = {};
  for (const [name, id] of Object.entries(PROBE_IDS)) paths[id] = buildProbe(name);
  return paths;
}

/** Builds both programs (`make program`'s recipe); returns the path of `target/deploy/oncepay.so`. */
export function buildOncepay(): string {
  const r = run(BUILD_SH, []);
  if (r.status !== 0) throw new Error(`build.sh (make program) failed:\n${r.stderr}`);
  return join(ROOT, 'target/deploy/oncepay.so');
}

export function scratchDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `oncepay-sbf-${label}-`));
}

/** Assembles BPF assembly text into a relocatable object with llvm-mc. */
export function assemble(dir: string, name: string, source: string, mcpu = 'v2'): string {
  const src = join(dir, `${name}.s`);
  const obj = join(dir, `${name}.o`);
  writeFileSync(src, source);
  execFileSync(join(LLVM_BIN, 'llvm-mc'), ['-triple', 'bpfel', `-mcpu=${mcpu}`, '-filetype=obj', src, '-o', obj]);
  return obj;
}

export function elf2sbf(input: string, output: string, unchecked = false): CommandResult {
  return run('python3', [ELF2SBF, ...(unchecked ? ['--unchecked'] : []), input, output]);
}

/** Compiles a probe's optimized bitcode with other llc flags (e.g. -mcpu=v3). */
export function llc(bitcode: string, output: string, mcpu: string): void {
  execFileSync(join(LLVM_BIN, 'llc'), [
    '-march=bpfel',
    `-mcpu=${mcpu}`,
    '-O2',
    '-bpf-stack-size=4096',
    '-filetype=obj',
    bitcode,
    '-o',
    output,
  ]);
}
