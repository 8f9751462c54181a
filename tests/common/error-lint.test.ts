// The lint rule that keeps every thrown error an OncepayError (eslint.config.mjs, no-restricted-syntax): it refuses
// `new Error(…)` and its siblings in the project's code, lets an OncepayError through, and leaves tests alone.
// Runs ESLint itself on the project's config; no I/O beyond reading it.
import { expect } from 'chai';
import { ESLint } from 'eslint';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

async function restricted(file: string, code: string): Promise<number> {
  const [r] = await new ESLint({ cwd: root }).lintText(code, { filePath: path.join(root, file) });
  return r.messages.filter((m) => m.ruleId === 'no-restricted-syntax').length;
}

describe('eslint: every thrown error is an OncepayError', function () {
  this.timeout(60_000);

  it('refuses new Error, RangeError and TypeError (and the calls without new) in the code', async () => {
    for (const file of ['app/payout/x.ts', 'indexer/source/x.ts', 'db/x.ts', 'bench/x.ts', 'sim/x.ts']) {
      expect(await restricted(file, "export const f = () => { throw new Error('x'); };\n"), file).to.equal(1);
    }
    expect(await restricted('common/x.ts', "export const f = () => { throw new RangeError('x'); };\n")).to.equal(1);
    expect(await restricted('common/x.ts', "export const f = () => { throw TypeError('x'); };\n")).to.equal(1);
  });

  it('lets an OncepayError through, and tests and the testkit throw what they like', async () => {
    const oncepay =
      "import { OncepayError, DB_CODES } from '../common/errors';\n" +
      'export const f = () => { throw new OncepayError(DB_CODES.HA_FAILED); };\n';
    expect(await restricted('db/x.ts', oncepay)).to.equal(0);
    expect(await restricted('tests/db/x.test.ts', "export const f = () => { throw new Error('x'); };\n")).to.equal(0);
    expect(await restricted('testkit/x.ts', "export const f = () => { throw new Error('x'); };\n")).to.equal(0);
  });
});
