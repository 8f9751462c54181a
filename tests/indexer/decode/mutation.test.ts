// Robustness: thousands of seeded random mutations of real and LiteSVM fixtures (a field deleted, or replaced by
// a value of another type). Each must either decode or fail with a named ONCEPAY__DECODE__ code — never a
// TypeError, never a non-OncepayError. Deterministic: a fixed seed, no clock.
import { expect } from 'chai';
import { isOncepayError } from '../../../common/errors';
import {
  DECODE_CODES,
  decodeTransaction,
  readTransactionsInput,
  readTransactionsInputLenient,
} from '../../../indexer/decode';
import { allFixtureInputs, clone, fixtureText } from './helpers';

const CODES = new Set<string>(Object.values(DECODE_CODES));

/** xorshift32: small, seeded, reproducible. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

type Node = Record<string, unknown> | unknown[];

/** Every (container, key) pair in the tree, so a mutation can pick any field or element. */
function slots(root: unknown): Array<[Node, string | number]> {
  const out: Array<[Node, string | number]> = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push([v, i]);
        walk(x);
      });
    } else if (typeof v === 'object' && v !== null) {
      for (const k of Object.keys(v)) {
        out.push([v as Record<string, unknown>, k]);
        walk((v as Record<string, unknown>)[k]);
      }
    }
  };
  walk(root);
  return out;
}

const REPLACEMENTS: unknown[] = [
  null,
  undefined,
  0,
  -1,
  1.5,
  2 ** 60,
  2n ** 70n,
  '',
  'x',
  '0OIl',
  [],
  {},
  [1, 2],
  { a: 1 },
  true,
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  300,
];

function mutate(tx: unknown, next: () => number): unknown {
  const copy = clone(tx);
  const all = slots(copy);
  const changes = 1 + Math.floor(next() * 3);
  for (let c = 0; c < changes && all.length > 0; c++) {
    const [node, key] = all[Math.floor(next() * all.length)];
    const pick = REPLACEMENTS[Math.floor(next() * REPLACEMENTS.length)];
    if (Array.isArray(node)) {
      if (next() < 0.2) node.splice(key as number, 1);
      else node[key as number] = pick;
    } else if (next() < 0.3) {
      delete node[key as string];
    } else {
      node[key as string] = pick;
    }
  }
  return copy;
}

describe('decode: random mutations fail only with named codes', () => {
  it('150 mutations of each fixture: decoded, or an OncepayError with a DECODE code', () => {
    const next = rng(0x0ce9a7);
    const seen = new Map<string, number>();
    let decoded = 0;
    for (const [label, tx] of allFixtureInputs()) {
      for (let i = 0; i < 150; i++) {
        const m = mutate(tx, next);
        try {
          const rs = decodeTransaction(m);
          expect(rs, label).to.be.an('array');
          decoded++;
        } catch (e) {
          if (!isOncepayError(e) || !CODES.has(e.code)) {
            throw new Error(
              `${label} mutation ${i}: ${(e as Error).stack}\n${JSON.stringify(m, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)).slice(0, 2000)}`,
              { cause: e },
            );
          }
          seen.set(e.code, (seen.get(e.code) ?? 0) + 1);
        }
      }
    }
    // the mutations reach both outcomes and several distinct codes
    expect(decoded).to.be.greaterThan(100);
    expect(seen.size).to.be.greaterThan(3);
  });

  it('corrupted input text: the strict reader fails only with named codes, the lenient one never throws', () => {
    const next = rng(0x5eed);
    const texts = ['spl-two-transfers', 'v0-lookup-table', 'system-big-lamports'].flatMap((n) => [
      fixtureText(n, 'json'),
      fixtureText(n, 'jsonParsed'),
    ]);
    const lines = texts.map((t) => JSON.stringify(JSON.parse(t))).join('\n'); // a JSON-lines document
    const CHARS = ['{', '}', '[', ']', '"', ',', ':', '\\', '\n', '9', '-', 'e', ' ', 'null', '\u0000'];
    let parsedOk = 0;
    for (let i = 0; i < 300; i++) {
      const base = i % 4 === 0 ? lines : texts[i % texts.length];
      let t = base;
      const edits = 1 + Math.floor(next() * 4);
      for (let k = 0; k < edits; k++) {
        const at = Math.floor(next() * t.length);
        const what = next();
        if (what < 0.33) t = t.slice(0, at) + t.slice(at + 1 + Math.floor(next() * 5));
        else if (what < 0.66) t = t.slice(0, at) + CHARS[Math.floor(next() * CHARS.length)] + t.slice(at);
        else t = t.slice(0, at) + CHARS[Math.floor(next() * CHARS.length)] + t.slice(at + 1);
      }
      try {
        readTransactionsInput(t);
        parsedOk++;
      } catch (e) {
        if (!isOncepayError(e) || !CODES.has(e.code))
          throw new Error(`text mutation ${i}: ${(e as Error).stack}`, { cause: e });
        if (e.code === DECODE_CODES.MALFORMED_JSON) expect(e.context.line, `mutation ${i}`).to.be.a('number');
      }
      const lenient = readTransactionsInputLenient(t);
      for (const err of lenient.errors) expect(CODES.has(err.code), err.code).to.equal(true);
    }
    expect(parsedOk).to.be.greaterThan(0);
  });
});
