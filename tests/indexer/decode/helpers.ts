// Fixture access for the decoder tests: pure file reads, no network, no database.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decodeTransaction, readTransactionsInput, type Receipt } from '../../../indexer/decode';

export const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'transactions');
export const LITESVM = join(FIXTURES, 'litesvm');
export const REAL = join(FIXTURES, 'real');

interface Manifest {
  names: Record<string, string>;
  [caseName: string]: unknown;
}

export const manifest = JSON.parse(readFileSync(join(LITESVM, 'manifest.json'), 'utf8')) as Manifest;

/** Address of a named key from the generator (throws on a typo so a test cannot pass vacuously). */
export function key(label: string): string {
  const v = manifest.names[label];
  if (!v) throw new Error(`no key named ${label} in manifest`);
  return v;
}

export function signatureOf(caseName: string): string {
  return (manifest[caseName] as { signature: string }).signature;
}

export type Encoding = 'json' | 'jsonParsed';

export function fixtureText(caseName: string, encoding: Encoding): string {
  return readFileSync(join(LITESVM, encoding, `${caseName}.json`), 'utf8');
}

/** The fixture read the way the CLI reads it (exact integers). */
export function fixture(caseName: string, encoding: Encoding): Record<string, unknown> {
  const items = readTransactionsInput(fixtureText(caseName, encoding));
  if (items.length !== 1) throw new Error(`${caseName}: expected one transaction`);
  return items[0] as Record<string, unknown>;
}

export function decodeCase(caseName: string, encoding: Encoding): Receipt[] {
  return decodeTransaction(fixture(caseName, encoding));
}

export function caseNames(): string[] {
  return readdirSync(join(LITESVM, 'json'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.replace(/\.json$/, ''))
    .sort();
}

export function realFiles(): string[] {
  return readdirSync(REAL)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

/** A deep copy (fixtures are mutated by some tests). */
export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Every real fixture, LiteSVM (both encodings) and mainnet/devnet (base64 and jsonParsed), by label. */
export function allFixtureInputs(): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const name of caseNames()) {
    out.push([`litesvm/json/${name}`, fixture(name, 'json')]);
    out.push([`litesvm/jsonParsed/${name}`, fixture(name, 'jsonParsed')]);
  }
  for (const f of realFiles()) out.push([`real/${f}`, readTransactionsInput(readFileSync(join(REAL, f), 'utf8'))[0]]);
  for (const f of readdirSync(join(REAL, 'jsonParsed')).filter((x) => x.endsWith('.json'))) {
    out.push([`real/jsonParsed/${f}`, readTransactionsInput(readFileSync(join(REAL, 'jsonParsed', f), 'utf8'))[0]]);
  }
  return out;
}
