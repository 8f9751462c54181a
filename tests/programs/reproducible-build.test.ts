// The reproducible build: programs/oncepay/README.md ("Reproducible build") records the sha256 that `make program`
// gives each program on a fresh machine with the Debian packages it names. This checks the build in target/deploy
// against it (make test builds it first): a change to a program, its Cargo.lock, the toolchain or a Debian package
// that changes a .so must record the new sha256, so the README stays what a fresh machine gets.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { programSoPath, type ProgramBinary } from '../../common/program-binary';
import { REPO_ROOT } from '../../testkit/program/runtimes';

const README = join(REPO_ROOT, 'programs/oncepay/README.md');

/** The README's records: package → version, and .so file name → sha256. */
function recorded(): { packages: Map<string, string>; sha256: Map<string, string> } {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('## Reproducible build'));
  const packages = new Map(
    [...section.matchAll(/^\| package `([\w.-]+)` \| `([^`]+)` \|$/gm)].map((m) => [m[1], m[2]]),
  );
  const sha256 = new Map(
    [...section.matchAll(/^\| `target\/deploy\/([\w.]+)` \| `([0-9a-f]{64})` \|$/gm)].map((m) => [m[1], m[2]]),
  );
  return { packages, sha256 };
}

function installed(pkg: string): string {
  return execFileSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' }).trim();
}

describe('program reproducible build (programs/oncepay/README.md)', function () {
  const { packages, sha256 } = recorded();

  it('records the Debian packages the build depends on and a sha256 for each program', function () {
    expect([...packages.keys()].sort()).to.deep.equal(['llvm-22', 'rust-web-src', 'rustc-web']);
    expect([...sha256.keys()].sort()).to.deep.equal(['oncepay.so', 'oncepay_lite.so']);
  });

  it('target/deploy holds the .so files the README records, built with the packages it names', function () {
    const here = [...packages.keys()].map((p) => `${p} ${installed(p)}`);
    const there = [...packages].map(([p, v]) => `${p} ${v}`);
    expect(
      here,
      'this machine has other Debian packages than the README records: rebuild and record again',
    ).to.deep.equal(there);
    for (const binary of ['anchor', 'lite'] as ProgramBinary[]) {
      const so = programSoPath(binary);
      const name = so.slice(so.lastIndexOf('/') + 1);
      const got = createHash('sha256').update(readFileSync(so)).digest('hex');
      expect(got, `${name}: make program, then record its sha256 in programs/oncepay/README.md`).to.equal(
        sha256.get(name),
      );
    }
  });
});
