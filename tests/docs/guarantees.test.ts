// docs/guarantees.md cannot go stale: every test file it names as evidence exists and contains every case it quotes
// after it, every section has its parts, and the simulation invariants it names are exactly those of sim/invariants.ts.
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { INVARIANT_NAMES } from '../../sim/invariants';

const ROOT = path.resolve(__dirname, '..', '..');
const PAGE = path.join(ROOT, 'docs', 'guarantees.md');
const SECTIONS = [
  '1. Payout on chain',
  '2. Payout journal and worker pool',
  '3. API Idempotency-Key',
  '4. Receipts ledger',
  '5. Exceptions and refunds',
  '6. Fulfilment and outbox delivery',
  '7. The checkout page (what the payer sees)',
];

/** Whitespace runs as one space, and a template literal's escaped backtick as a backtick: names as a reader sees them. */
const flat = (s: string) => s.replace(/\\`/g, '`').replace(/\s+/g, ' ');

/** Each `tests/…` file the page names, with the "case names" quoted after it (up to the next file or the line's end). */
export function evidenceOf(page: string): Array<{ file: string; cases: string[] }> {
  const text = flat(page);
  const out: Array<{ file: string; cases: string[] }> = [];
  const files = [...text.matchAll(/`(tests\/[^`\s]+\.test\.ts)`/g)];
  files.forEach((m, i) => {
    const end = i + 1 < files.length ? files[i + 1].index : text.length;
    const tail = text.slice(m.index! + m[0].length, end);
    // The quotes that follow the file name (after a note in parentheses, if any): ': "a"; "b"'; anything else ends them.
    const run = /^(?:\s*\([^)]*\))?((?:[:;,]?\s*"[^"]+")*)/.exec(tail)![1];
    out.push({ file: m[1], cases: [...run.matchAll(/"([^"]+)"/g)].map((c) => c[1]) });
  });
  return out;
}

describe('docs/guarantees.md (its evidence exists)', () => {
  const page = fs.readFileSync(PAGE, 'utf8');

  it('has one section per boundary, each with its guarantee, key, scope, assumptions, what it does not promise and its evidence', () => {
    const sections = page.split(/^## /m).slice(1);
    const titles = sections.map((s) => s.split('\n')[0].trim());
    expect(titles.filter((t) => /^\d\./.test(t))).to.deep.equal(SECTIONS);
    for (const s of sections.filter((x) => /^\d\./.test(x))) {
      const title = s.split('\n')[0];
      for (const part of [
        '**Guarantee.**',
        '**Key.**',
        '**Scope and duration.**',
        '**Assumptions.**',
        '**Not promised.**',
        '**Evidence (tests).**',
      ])
        expect(s, `${title}: ${part}`).to.contain(part);
    }
  });

  it('every test file named as evidence exists and contains every case quoted after it', () => {
    const evidence = evidenceOf(page);
    expect(evidence.length).to.be.greaterThan(20);
    expect(evidence.reduce((n, e) => n + e.cases.length, 0)).to.be.greaterThan(40);
    const missing: string[] = [];
    for (const { file, cases } of evidence) {
      const full = path.join(ROOT, file);
      if (!fs.existsSync(full)) {
        missing.push(`${file}: no such file`);
        continue;
      }
      const source = flat(fs.readFileSync(full, 'utf8'));
      for (const c of cases) if (!source.includes(c)) missing.push(`${file}: no case "${c}"`);
    }
    expect(missing).to.deep.equal([]);
  });

  it('names simulation invariants only as sim/invariants.ts has them, and every one of them', () => {
    const named = [...flat(page).matchAll(/\*\*Evidence \(simulation\)\.\*\* ([^(]*)\(/g)].flatMap((m) =>
      [...m[1].matchAll(/`([a-z0-9-]+)`/g)].map((x) => x[1]),
    );
    expect(named).to.include.members(['no-op-paid-twice', 'finalized-transfer-credited-once', 'counters-consistent']);
    expect(
      named.filter((n) => !INVARIANT_NAMES.includes(n)),
      'named on the page, not in sim/invariants.ts',
    ).to.deep.equal([]);
    expect(
      INVARIANT_NAMES.filter((n) => !named.includes(n)),
      'in sim/invariants.ts, on no section',
    ).to.deep.equal([]);
  });

  it('the evidence parser reads files and the quotes right after them, not quotes further on', () => {
    const sample =
      '- `tests/a.test.ts`: "one"; "two\n  wrapped" (a note) "not a case"; `tests/b.test.ts`, ' +
      '`tests/c.test.ts` (the note): "three"';
    expect(evidenceOf(sample)).to.deep.equal([
      { file: 'tests/a.test.ts', cases: ['one', 'two wrapped'] },
      { file: 'tests/b.test.ts', cases: [] },
      { file: 'tests/c.test.ts', cases: ['three'] },
    ]);
  });
});
