// The READMEs cannot go stale or grow into lab notes: every README is under the line limit, and every repository path
// (`folder/file.ts`, `folder/`), `oncepay <command>` and `make <target>` one names in backticks exists — paths in the
// tree (from the README's folder or the repository root), commands in the commander tree bin/oncepay builds
// (cli/main.ts buildCli), targets in the Makefile.
import { expect } from 'chai';
import { execFileSync } from 'child_process';
import type { Command } from 'commander';
import * as fs from 'fs';
import * as path from 'path';
import { buildCli } from '../../cli/main';

const ROOT = path.resolve(__dirname, '..', '..');
export const README_LINE_LIMIT = 150;

/** Paths that name what a run creates (not in the tree): runtime folders and build output. */
const GENERATED = /^(\.oncepay|target|dist|node_modules|toolchain\/sbf\/build|\.anchor|test-ledger)(\/|$)/;

/**
 * Spans that read as paths but name something outside this tree: upstream sources the READMEs cite (Rust's std and
 * core, LLVM, other repositories), media types and field pairs written with a slash.
 */
const NOT_OURS =
  /^(std|core|library|llvm|chain\/solana|cordialsys|p2p-org|application|text|pre|meta\.pre|fadd)\/|^(Cargo\.toml|genesis\.json)$/;

/** npm packages the project uses (a name like `bignumber.js` is a package, not a file). */
const PACKAGES = new Set(
  Object.keys({
    ...JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).dependencies,
    ...JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies,
  }),
);

/** Every tracked file, and every folder above one (`a/b/`). */
const tracked = (): { files: string[]; entries: Set<string> } => {
  const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '' && fs.existsSync(path.join(ROOT, f)));
  const entries = new Set<string>();
  for (const f of files) {
    entries.add(f);
    for (let d = path.dirname(f); d !== '.'; d = path.dirname(d)) entries.add(`${d}/`);
  }
  return { files, entries };
};

/** Names a README gives on purpose to what is not here, each with why. */
const ABSENT_ON_PURPOSE: Record<string, string> = {
  'sim/README.md: oncepay sim': 'the README says why there is no such command',
  'idl/README.md: programs/oncepay-lite/src/idl.rs': 'the retired generator, named as retired',
  'deploy/README.md: prometheus.yml': "Prometheus's own configuration file, on the operator's machine",
  'programs/oncepay/README.md: program/Cargo.toml': 'a file of an upstream crate (spl-program-metadata)',
};

const readmes = (): string[] =>
  execFileSync('git', ['ls-files', '*README.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '' && fs.existsSync(path.join(ROOT, f)));

/** Every `code span` of a markdown text, outside fenced blocks too (a fenced block's lines are its own spans). */
export function codeSpans(text: string): string[] {
  const spans: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) spans.push(line.trim());
    else for (const m of line.matchAll(/`([^`\n]+)`/g)) spans.push(m[1].trim());
  }
  return spans;
}

/** A span's first word, when it reads as a repository path: a folder with a slash, or a file with an extension. */
export function repoPathOf(span: string): string | null {
  const word = span.split(/\s+/)[0].replace(/[,;:]$/, '');
  if (!/^[A-Za-z0-9_.][\w.@-]*(\/[\w.@-]+)*\/?$/.test(word)) return null;
  if (word.startsWith('.') && !word.startsWith('./') && !word.includes('/')) return null; // `.ts`, `.env`
  const file = /\.(ts|js|mjs|md|sh|rs|sql|json|toml|yml|yaml)$/.test(word);
  const folder = word.includes('/') && !/[@]/.test(word);
  if (!file && !folder) return null;
  if (/^\d/.test(word) || word.includes('..')) return null;
  return word.replace(/^\.\//, '');
}

/** `oncepay a b …` → ['a', 'b', …] up to the first flag or placeholder; null when the span is no oncepay command. */
export function oncepayCommand(span: string): string[] | null {
  const m = /^(?:npx\s+)?oncepay\s+(.*)$/.exec(span);
  if (!m) return null;
  const words: string[] = [];
  for (const w of m[1].split(/\s+/)) {
    if (!/^[a-z][a-z0-9-]*$/.test(w)) break;
    words.push(w);
  }
  return words;
}

/** `make t …` → ['t', …] (the words that are targets); null when the span is no make command. */
export function makeTargets(span: string): string[] | null {
  const m = /^make\s+(.*)$/.exec(span);
  if (!m) return null;
  const out: string[] = [];
  for (const w of m[1].split(/\s+/)) {
    if (w.startsWith('#') || ['&&', '||', ';', '|'].includes(w)) break; // a comment or the next command
    if (/^[a-z][a-z0-9-]*$/.test(w)) out.push(w); // not VAR=value, not -flags
  }
  return out;
}

/** Whether `words` is a command path of the tree: each word a subcommand (or alias) of the last, or its argument. */
function commandExists(root: Command, words: string[]): boolean {
  let cmd = root;
  for (const w of words) {
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (sub) cmd = sub;
    else return cmd !== root && cmd.commands.length === 0; // a word after a leaf is an argument
  }
  return true;
}

/**
 * Whether a path a README names is in the tree: from its own folder or any folder above it, or as the tail of a
 * tracked path (a README names `run-payout.ts` for `app/payout/run-payout.ts`, `source/` for `indexer/source/`);
 * a migration may be named by its number (`migrations/0110`).
 */
function pathExists(readme: string, p: string, tree: { files: string[]; entries: Set<string> }): boolean {
  if (GENERATED.test(p) || NOT_OURS.test(p) || PACKAGES.has(p)) return true;
  for (let dir = path.dirname(readme); ; dir = path.dirname(dir)) {
    const joined = path.posix.join(dir, p) + (p.endsWith('/') && !path.posix.join(dir, p).endsWith('/') ? '/' : '');
    const rel = joined.replace(/^\.\//, '');
    if (tree.entries.has(rel) || tree.entries.has(`${rel}/`)) return true;
    if (dir === '.' || dir === '') break;
  }
  if (/^migrations\/\d{4}$/.test(p)) return tree.files.some((f) => f.startsWith(`${p}_`));
  for (const e of tree.entries) if (e.endsWith(`/${p}`) || e.endsWith(`/${p}/`)) return true;
  return false;
}

describe('READMEs (describe, and name only what exists)', () => {
  const files = readmes();
  const makefile = fs.readFileSync(path.join(ROOT, 'Makefile'), 'utf8');
  const targets = new Set([...makefile.matchAll(/^([a-z][a-z0-9-]*):/gm)].map((m) => m[1]));
  const cli = buildCli();
  const tree = tracked();

  it(`every README is under ${README_LINE_LIMIT} lines`, () => {
    const over: string[] = [];
    for (const f of files) {
      const lines = fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').length - 1;
      if (lines >= README_LINE_LIMIT) over.push(`${f}: ${lines} lines (at most ${README_LINE_LIMIT - 1})`);
    }
    expect(over).to.deep.equal([]);
  });

  it('every repository path a README names exists', () => {
    const missing: string[] = [];
    for (const f of files)
      for (const span of codeSpans(fs.readFileSync(path.join(ROOT, f), 'utf8'))) {
        const p = repoPathOf(span);
        if (p !== null && !pathExists(f, p, tree) && !ABSENT_ON_PURPOSE[`${f}: ${p}`]) missing.push(`${f}: ${p}`);
      }
    expect(missing).to.deep.equal([]);
  });

  it('every `oncepay <command>` a README names is in the command tree, every `make <target>` in the Makefile', () => {
    const missing: string[] = [];
    for (const f of files)
      for (const span of codeSpans(fs.readFileSync(path.join(ROOT, f), 'utf8'))) {
        const words = oncepayCommand(span);
        const named = `${f}: oncepay ${words?.join(' ')}`;
        if (words !== null && !commandExists(cli, words) && !ABSENT_ON_PURPOSE[named]) missing.push(named);
        for (const t of makeTargets(span) ?? []) if (!targets.has(t)) missing.push(`${f}: make ${t}`);
      }
    expect(missing).to.deep.equal([]);
  });

  it('the extraction reads paths, commands and targets as a reader does', () => {
    expect(repoPathOf('indexer/ledger/types.ts')).to.equal('indexer/ledger/types.ts');
    expect(repoPathOf('webhook.ts buildWebhookApp')).to.equal('webhook.ts');
    expect(repoPathOf('deploy/')).to.equal('deploy/');
    expect(repoPathOf('POST /v1/webhooks/:provider')).to.equal(null);
    expect(repoPathOf('NUMERIC(20,0)')).to.equal(null);
    expect(oncepayCommand('oncepay indexer webhook --secret-file F')).to.deep.equal(['indexer', 'webhook']);
    expect(oncepayCommand('make test')).to.equal(null);
    expect(makeTargets('make demo test')).to.deep.equal(['demo', 'test']);
    expect(makeTargets('make sim SEED=3   # one seed, the schedule printed')).to.deep.equal(['sim']);
    expect(commandExists(cli, ['indexer', 'webhook'])).to.equal(true);
    expect(commandExists(cli, ['indexer', 'no-such-command'])).to.equal(false);
  });
});
