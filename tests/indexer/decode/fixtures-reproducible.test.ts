// The LiteSVM fixtures are exactly what the generator produces today: re-run it in-process (LiteSVM executes the
// real token programs again) and compare with the committed files byte for byte. Catches hand edits and drift.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { generateFixtures } from '../../fixtures/transactions/generate';
import { LITESVM, caseNames } from './helpers';

describe('decode: LiteSVM fixtures are reproducible', () => {
  it('generateFixtures() reproduces every committed file', () => {
    const files = generateFixtures();
    const names = caseNames();
    expect(Object.keys(files).sort()).to.deep.equal(
      ['manifest.json', ...names.map((n) => `json/${n}.json`), ...names.map((n) => `jsonParsed/${n}.json`)].sort(),
    );
    for (const [rel, content] of Object.entries(files)) {
      expect(content, rel).to.equal(readFileSync(join(LITESVM, rel), 'utf8'));
    }
  });
});
