// common/program-binary.ts: the one place that turns ONCEPAY_PROGRAM into the .so a localnet, the demo and the SDK
// suites load (no runtime needed).
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isOncepayError, PROGRAM_BINARY_CODES } from '../../common/errors';
import { programSoPath, requireProgramSo, selectedProgramBinary } from '../../common/program-binary';

describe('program binary selection (ONCEPAY_PROGRAM)', function () {
  it('is the Anchor program unless ONCEPAY_PROGRAM=lite', function () {
    expect(selectedProgramBinary({})).to.equal('anchor');
    expect(selectedProgramBinary({ ONCEPAY_PROGRAM: '' })).to.equal('anchor');
    expect(selectedProgramBinary({ ONCEPAY_PROGRAM: 'anchor' })).to.equal('anchor');
    expect(selectedProgramBinary({ ONCEPAY_PROGRAM: 'lite' })).to.equal('lite');
  });

  it('refuses an unknown name with a code that lists the choices', function () {
    let caught: unknown;
    try {
      selectedProgramBinary({ ONCEPAY_PROGRAM: 'pinocchio' });
    } catch (e) {
      caught = e;
    }
    expect(isOncepayError(caught, PROGRAM_BINARY_CODES.UNKNOWN)).to.equal(true);
    expect((caught as Error).message).to.contain('anchor, lite');
  });

  it('names target/deploy/oncepay.so and oncepay_lite.so, and says how to build a missing one', function () {
    const root = mkdtempSync(join(tmpdir(), 'oncepay-binary-'));
    try {
      expect(programSoPath('anchor', root)).to.equal(join(root, 'target/deploy/oncepay.so'));
      expect(programSoPath('lite', root)).to.equal(join(root, 'target/deploy/oncepay_lite.so'));
      let caught: unknown;
      try {
        requireProgramSo('lite', root);
      } catch (e) {
        caught = e;
      }
      expect(isOncepayError(caught, PROGRAM_BINARY_CODES.MISSING)).to.equal(true);
      expect((caught as Error).message).to.contain('make program');
      mkdirSync(join(root, 'target/deploy'), { recursive: true });
      writeFileSync(join(root, 'target/deploy/oncepay_lite.so'), '');
      expect(requireProgramSo('lite', root)).to.equal(join(root, 'target/deploy/oncepay_lite.so'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
