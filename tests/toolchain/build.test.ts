// build.sh: idempotent (stamp of sources + Cargo.lock + toolchain files + std
// patch), rebuilds on change, clear errors for missing Debian packages, bad
// usage, a std patch that no longer applies and stack frames over 4 KiB;
// dependencies that declare cdylib build without bpf-linker.
import { expect } from 'chai';
import { cpSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_SH, buildCrate, buildProbe, ROOT, run, scratchDir } from '../../testkit/toolchain/build';
import { createLiteSvm } from '../../testkit/toolchain/litesvm-run';

describe('toolchain: build.sh', function () {
  this.timeout(600_000);
  let dir: string;
  before(() => {
    dir = scratchDir('build');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('does nothing when no input changed', () => {
    const so = buildProbe('hello');
    const before = statSync(so).mtimeMs;
    const r = run(BUILD_SH, ['--crate', 'toolchain/sbf/probes/hello', '--out', so]);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.include('probe_hello: up to date');
    expect(r.stderr).to.not.include('cargo rustc');
    expect(statSync(so).mtimeMs).to.equal(before);
  });

  it('rebuilds a crate when one of its sources (or a path dependency) changes', async () => {
    // A renamed copy of the hello probe and of its runtime crate.
    const probes = join(ROOT, 'toolchain/sbf/probes');
    cpSync(join(probes, 'rt'), join(dir, 'rt'), { recursive: true });
    cpSync(join(probes, 'hello'), join(dir, 'hello-copy'), { recursive: true });
    const manifest = join(dir, 'hello-copy/Cargo.toml');
    writeFileSync(
      manifest,
      readFileSync(manifest, 'utf8').replace('name = "probe-hello"', 'name = "probe-hello-copy"'),
    );
    rmSync(join(dir, 'hello-copy/Cargo.lock'), { force: true });
    const so = join(dir, 'out/hello-copy.so');

    expect(buildCrate(join(dir, 'hello-copy'), so).stderr).to.include('cargo rustc');
    expect(buildCrate(join(dir, 'hello-copy'), so).stderr).to.include('up to date');

    const lib = join(dir, 'hello-copy/src/lib.rs');
    writeFileSync(lib, readFileSync(lib, 'utf8').replace('hello from the oncepay toolchain', 'rebuilt after an edit'));
    expect(buildCrate(join(dir, 'hello-copy'), so).stderr).to.include('cargo rustc');

    const rt = join(dir, 'rt/src/lib.rs');
    writeFileSync(rt, readFileSync(rt, 'utf8').replace('log("probe panicked")', 'log("copy panicked")'));
    expect(buildCrate(join(dir, 'hello-copy'), so).stderr).to.include('cargo rustc');

    const h = await createLiteSvm({ '11111111111111111111111111111112': so });
    const r = await h.invoke('11111111111111111111111111111112', Buffer.from('ab'));
    expect(r.logs).to.include('Program log: rebuilt after an edit');
    expect(r.returnData.toString()).to.equal('ba');
  });

  it('a std patch that no longer applies: every stamp is stale, and the error names the rustc version', () => {
    const so = buildProbe('hello');
    // The same patch with one context line changed, as after a Debian update.
    const patch = join(dir, 'moved.patch');
    const original = readFileSync(join(ROOT, 'toolchain/sbf/std/solana-std.patch'), 'utf8');
    const moved = original.replace(
      ' pub fn rust_oom(layout: Layout) -> ! {',
      ' pub fn rust_oom(layout: Layout, moved: ()) -> ! {',
    );
    expect(moved).to.not.equal(original);
    writeFileSync(patch, moved);
    const r = run('env', [
      `ONCEPAY_SBF_STD_PATCH=${patch}`,
      BUILD_SH,
      '--crate',
      'toolchain/sbf/probes/hello',
      '--out',
      so,
    ]);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.not.include('up to date');
    const release = /^release: (.+)$/m.exec(run('/usr/bin/rustc', ['-vV']).stdout)?.[1];
    expect(release).to.match(/^\d+\.\d+\.\d+/);
    expect(r.stderr).to.include(`does not apply to the Rust library source of rustc ${release}`);
    expect(r.stderr).to.include('rust-web-src');
    expect(r.stderr).to.include('ONCEPAY__SBF__STD_PATCH');
    // Nothing was replaced: the real patch's std is still current.
    const again = run(BUILD_SH, ['--crate', 'toolchain/sbf/probes/hello', '--out', so]);
    expect(again.stderr).to.include('probe_hello: up to date');
  });

  it('refuses a stack frame over 4 KiB, naming the Rust function and saying to Box it', () => {
    const r = run(BUILD_SH, ['--crate', 'tests/toolchain/fixtures/big-frame', '--out', join(dir, 'big-frame.so')]);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.match(
      /stack frame of \d+ bytes in `big_frame::checksum_table` exceeds the SBF limit of 4096 bytes/,
    );
    expect(r.stderr).to.include('Box');
    expect(r.stderr).to.include('ONCEPAY__SBF__STACK_FRAME');
  });

  it('builds a crate whose dependency declares cdylib (as solana-program does) without bpf-linker', async () => {
    const so = join(dir, 'cdylib-dep.so');
    buildCrate(join(ROOT, 'tests/toolchain/fixtures/cdylib-dep'), so);
    const h = await createLiteSvm({ '11111111111111111111111111111112': so });
    const r = await h.invoke('11111111111111111111111111111112', Buffer.from('dep'));
    expect(r.logs).to.include('Program log: hello from the oncepay toolchain');
    expect(r.returnData.toString()).to.equal('ped');
  });

  it('names the Debian package when a tool is missing', () => {
    const r = run('env', [
      'ONCEPAY_SBF_LLVM_BIN=/nonexistent/llvm-22/bin',
      BUILD_SH,
      '--crate',
      'toolchain/sbf/probes/hello',
      '--out',
      join(dir, 'never.so'),
    ]);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.include("install Debian package 'llvm-22'");
    expect(r.stderr).to.include('scripts/setup.sh');
  });

  it('--help documents the usage; an unknown option fails', () => {
    const help = run(BUILD_SH, ['--help']);
    expect(help.status).to.equal(0);
    expect(help.stdout).to.include('--crate DIR --out FILE');
    expect(help.stdout).to.include('--emit-ir');
    const bad = run(BUILD_SH, ['--bogus']);
    expect(bad.status).to.equal(1);
    expect(bad.stderr).to.include('unknown argument: --bogus');
  });

  it('--emit-ir keeps the linked and rewritten IR for debugging', () => {
    const so = join(dir, 'hello-ir.so');
    const r = run(BUILD_SH, ['--crate', 'toolchain/sbf/probes/hello', '--out', so, '--emit-ir']);
    expect(r.status, r.stderr).to.equal(0);
    const ir = readFileSync(join(ROOT, 'target/sbf/work/probe_hello/opt.ll'), 'utf8');
    expect(ir).to.include('define noundef i64 @entrypoint');
  });
});
