// build.sh: idempotent (stamp of sources + Cargo.lock + toolchain files),
// rebuilds on change, clear errors for missing Debian packages and bad usage.
import { expect } from 'chai';
import { cpSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_SH, buildCrate, buildProbe, ROOT, run, scratchDir } from './support/build';
import { createLiteSvm } from './support/litesvm-run';

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
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('name = "probe-hello"', 'name = "probe-hello-copy"'));
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

  it('names the Debian package when a tool is missing', () => {
    const r = run('env', ['ONCEPAY_SBF_LLVM_BIN=/nonexistent/llvm-22/bin', BUILD_SH, '--crate', 'toolchain/sbf/probes/hello',
      '--out', join(dir, 'never.so')]);
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
