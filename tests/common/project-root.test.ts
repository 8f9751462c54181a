// The project root from a source checkout, a compiled dist/ and an installed package: the compiled CLI
// (`make demo` runs dist/) once looked for the programs under dist/target/deploy.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findProjectRoot, projectRoot } from '../../common/project-root';
import { programSoPath } from '../../common/program-binary';

describe('common/project-root', () => {
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-root-'));
    for (const d of ['pkg/common', 'pkg/dist/common', 'node_modules/oncepay/dist/common']) {
      fs.mkdirSync(path.join(tmp, d), { recursive: true });
    }
    fs.writeFileSync(path.join(tmp, 'pkg/package.json'), '{}');
    fs.writeFileSync(path.join(tmp, 'node_modules/oncepay/package.json'), '{}');
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('a source checkout: common/.. is the root', () => {
    expect(findProjectRoot(path.join(tmp, 'pkg/common/..'))).to.equal(path.join(tmp, 'pkg'));
  });
  it('compiled: dist/common/.. (no package.json in dist/) resolves to the folder above dist/', () => {
    expect(findProjectRoot(path.join(tmp, 'pkg/dist/common/..'))).to.equal(path.join(tmp, 'pkg'));
  });
  it("installed: node_modules/oncepay/dist/common/.. resolves to the package's folder", () => {
    expect(findProjectRoot(path.join(tmp, 'node_modules/oncepay/dist/common/..'))).to.equal(
      path.join(tmp, 'node_modules/oncepay'),
    );
  });
  it('this checkout: the root holds package.json, and the programs are under its target/deploy', () => {
    expect(fs.existsSync(path.join(projectRoot(), 'package.json'))).to.equal(true);
    expect(programSoPath('anchor')).to.equal(path.join(projectRoot(), 'target', 'deploy', 'oncepay.so'));
  });
});
