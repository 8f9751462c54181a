// Reading decoder input: single result, RPC envelope, arrays, batches, JSON lines, getBlock; exact integers;
// named errors with line/column; the lenient reader keeps the good lines.
import { expect } from 'chai';
import { isOncepayError } from '../../../common/errors';
import {
  DECODE_CODES,
  decodeBlock,
  decodeTransaction,
  parseJsonExact,
  readTransactionsInput,
  readTransactionsInputLenient,
  receiptToJson,
} from '../../../indexer/decode';
import { markLongIntegers, parseJsonByCharacter } from '../../../indexer/decode/json-reader';
import { decodeCase, fixture, fixtureText, signatureOf } from './helpers';

function codeOf(f: () => unknown): { code: string; context: Record<string, unknown> } {
  try {
    f();
  } catch (e) {
    if (isOncepayError(e)) return { code: e.code, context: e.context };
    throw e;
  }
  throw new Error('expected an OncepayError');
}

const one = (): string =>
  JSON.stringify(fixture('spl-two-transfers', 'json'), (_k, v) => (typeof v === 'bigint' ? Number(v) : v));
const two = (): string =>
  JSON.stringify(fixture('spl-transfer-reference', 'json'), (_k, v) => (typeof v === 'bigint' ? Number(v) : v));

describe('decode: reading input', () => {
  it('accepts a bare result, an RPC envelope, an array of either (an RPC batch reply), and JSON lines', () => {
    const sig = (items: unknown[]): string[] => items.flatMap((t) => decodeTransaction(t)).map((r) => r.signature);
    const a = signatureOf('spl-two-transfers');
    const b = signatureOf('spl-transfer-reference');
    expect(sig(readTransactionsInput(one()))).to.deep.equal([a, a]);
    expect(sig(readTransactionsInput(`{"jsonrpc":"2.0","result":${one()},"id":7}`))).to.deep.equal([a, a]);
    expect(sig(readTransactionsInput(`[${one()},${two()}]`))).to.deep.equal([a, a, b]);
    expect(
      sig(
        readTransactionsInput(
          `[{"jsonrpc":"2.0","result":${one()},"id":1},{"jsonrpc":"2.0","result":${two()},"id":2}]`,
        ),
      ),
    ).to.deep.equal([a, a, b]);
    expect(sig(readTransactionsInput(`${one()}\n\n{"jsonrpc":"2.0","result":${two()},"id":2}\n`))).to.deep.equal([
      a,
      a,
      b,
    ]);
    expect(readTransactionsInput('  \n')).to.deep.equal([]);
    expect(sig(readTransactionsInput(`\ufeff${one()}`))).to.deep.equal([a, a]); // a byte-order mark is dropped
  });

  it('decodeTransaction accepts an RPC envelope as well as its result', () => {
    const tx = fixture('spl-two-transfers', 'json');
    expect(decodeTransaction({ jsonrpc: '2.0', id: 1, result: tx }).map(receiptToJson)).to.deep.equal(
      decodeTransaction(tx).map(receiptToJson),
    );
    expect(codeOf(() => decodeTransaction({ jsonrpc: '2.0', id: 1, result: null })).code).to.equal(
      DECODE_CODES.MALFORMED_TRANSACTION,
    );
  });

  it('a pretty-printed fixture (many lines) is one document, not JSON lines', () => {
    expect(fixtureText('spl-two-transfers', 'jsonParsed').split('\n').length).to.be.greaterThan(50);
    expect(readTransactionsInput(fixtureText('spl-two-transfers', 'jsonParsed'))).to.have.length(1);
  });

  it('malformed JSON → ONCEPAY__DECODE__MALFORMED_JSON with line and column', () => {
    const e = codeOf(() => readTransactionsInput('{\n  "slot": 1,\n  "meta": {,}\n}'));
    expect(e.code).to.equal(DECODE_CODES.MALFORMED_JSON);
    expect(e.context).to.include({ line: 3, column: 12 });
  });

  it('JSON lines: the bad line is named', () => {
    const e = codeOf(() => readTransactionsInput(`${one()}\n${two()}\n{"slot": 12,,}\n${one()}`));
    expect(e.code).to.equal(DECODE_CODES.MALFORMED_JSON);
    expect(e.context.line).to.equal(3);
  });

  it('lenient: one bad line does not lose the good ones', () => {
    const text = `${one()}\n{"slot": oops}\n{"jsonrpc":"2.0","error":{"code":-32009,"message":"Slot 5 was skipped"},"id":3}\n{"jsonrpc":"2.0","result":null,"id":4}\n${two()}\n`;
    const { items, errors } = readTransactionsInputLenient(text);
    expect(items).to.have.length(2);
    expect(errors.map((e) => [e.line, e.code])).to.deep.equal([
      [2, DECODE_CODES.MALFORMED_JSON],
      [3, DECODE_CODES.RPC_ERROR],
      [4, DECODE_CODES.TRANSACTION_NOT_FOUND],
    ]);
    expect(() => readTransactionsInput(text)).to.throw(/MALFORMED_JSON/);
  });

  it('lenient: an RPC batch reply keeps the good elements and names the bad one by index', () => {
    const { items, errors } = readTransactionsInputLenient(
      `[{"jsonrpc":"2.0","result":${one()},"id":1},{"jsonrpc":"2.0","result":null,"id":2}]`,
    );
    expect(items).to.have.length(1);
    expect(errors).to.deep.equal([
      { line: 1, index: 1, code: DECODE_CODES.TRANSACTION_NOT_FOUND, message: errors[0].message },
    ]);
  });

  it('lenient: a broken single document is one error', () => {
    const { items, errors } = readTransactionsInputLenient('{"a": [1, 2}');
    expect(items).to.deep.equal([]);
    expect(errors.map((e) => e.code)).to.deep.equal([DECODE_CODES.MALFORMED_JSON]);
  });

  it('integers above 2^53 are read exactly (as bigint); JSON.parse would round them', () => {
    expect(
      parseJsonExact('{"a":18446744073709551615,"b":9007199254740993,"c":9007199254740991,"d":1.5,"e":-3}'),
    ).to.deep.equal({
      a: 18446744073709551615n,
      b: 9007199254740993n,
      c: 9007199254740991,
      d: 1.5,
      e: -3,
    });
    expect(JSON.parse('9007199254740993')).to.equal(9007199254740992); // why the exact reader exists
    expect(parseJsonExact('18446744073709551615')).to.equal(18446744073709551615n);
    expect(parseJsonExact('[\n  9007199254740993,\n 1]')).to.deep.equal([9007199254740993n, 1]);
    expect(parseJsonExact('{"s":"12345678901234567890","n":1}')).to.deep.equal({ s: '12345678901234567890', n: 1 });
  });

  it('the exact reader agrees with JSON.parse on ordinary JSON, including escapes and __proto__', () => {
    const text =
      '{"s":"a\\"b\\\\c\\u00e9\\n","n":[0,-0,1e3,-2.5E-2,true,false,null],"__proto__":{"x":1},"nested":{"k":[[],{}]}}';
    const long = text.replace('"s"', '"pad":12345678901234567,"s"'); // forces the exact path
    const exact = parseJsonExact(long) as Record<string, unknown>;
    const plain = JSON.parse(text) as Record<string, unknown>;
    delete exact.pad;
    expect(exact).to.deep.equal(plain);
    expect(Object.getPrototypeOf(exact)).to.equal(Object.prototype);
    expect(Object.keys(exact)).to.include('__proto__');
  });

  it('jsonParsed lamports above 2^53: exact through readTransactionsInput, rejected (not rounded) after JSON.parse', () => {
    const text = fixtureText('system-big-lamports', 'jsonParsed');
    expect(decodeTransaction(readTransactionsInput(text)[0]).map((r) => r.amount)).to.deep.equal([
      9_007_199_254_740_993n,
    ]);
    const e = codeOf(() => decodeTransaction(JSON.parse(text)));
    expect(e.code).to.equal(DECODE_CODES.AMOUNT_IMPRECISE);
    // the json encoding carries the amount in base58 instruction data: exact even through JSON.parse
    expect(
      decodeTransaction(JSON.parse(fixtureText('system-big-lamports', 'json'))).map((r) => r.amount),
    ).to.deep.equal([9_007_199_254_740_993n]);
  });
});

describe('decode: getBlock results', () => {
  const block = (): Record<string, unknown> => ({
    blockHeight: 380_000_000,
    blockTime: 1_790_000_123,
    blockhash: 'EETubP5AKHgjPAhzPkToc6S4eibc4FFqQGnHR1Sh9rAr',
    parentSlot: 400_000_099,
    previousBlockhash: 'GH7ome3EiwEr7tu9JuTh2dpYWBJK3z69Xm1ZE3MEE6JC',
    rewards: [],
    transactions: ['spl-two-transfers', 'spl-failed', 'v0-lookup-table'].map((name) => {
      const { meta, transaction, version } = fixture(name, 'json');
      return { meta, transaction, version };
    }),
  });

  it('decodes every transaction, with the slot passed in and the block time of the block', () => {
    const rs = decodeBlock(block(), { slot: 400_000_100n, cluster: 'mainnet-beta' });
    expect(rs.map((r) => receiptToJson(r))).to.deep.equal(
      [...decodeCase('spl-two-transfers', 'json'), ...decodeCase('v0-lookup-table', 'json')].map(receiptToJson),
    );
    for (const r of rs) {
      expect(r.slot).to.equal(400_000_100n);
      expect(r.blockTime).to.equal(1_790_000_123);
      expect(r.cluster).to.equal('mainnet-beta');
    }
  });

  it('accepts the RPC envelope; without a slot, slot is null', () => {
    const rs = decodeBlock({ jsonrpc: '2.0', result: block(), id: 1 });
    expect(rs).to.have.length(4);
    expect(rs.every((r) => r.slot === null)).to.equal(true);
  });

  it('readTransactionsInput expands a getBlock result into its transactions', () => {
    expect(
      readTransactionsInput(JSON.stringify(block(), (_k, v) => (typeof v === 'bigint' ? Number(v) : v))),
    ).to.have.length(3);
  });

  it('one malformed transaction fails the block, naming which', () => {
    const b = block();
    type Tx = { transaction: { message: { instructions: Array<Record<string, unknown>> } } };
    (b.transactions as Tx[])[2].transaction.message.instructions[0].programIdIndex = 99;
    const e = codeOf(() => decodeBlock(b));
    expect(e.code).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
    expect(e.context.transaction).to.equal(2);
  });

  it('a block fetched without full transaction details → ONCEPAY__DECODE__MALFORMED_BLOCK', () => {
    const b = block();
    delete b.transactions;
    b.signatures = ['x'];
    expect(codeOf(() => decodeBlock(b)).code).to.equal(DECODE_CODES.MALFORMED_BLOCK);
  });
});

describe('decode: the exact JSON reader, differential', () => {
  /** xorshift32, seeded: reproducible documents. */
  function rng(seed: number): () => number {
    let x = seed;
    return () => {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      return x / 0x1_0000_0000;
    };
  }
  const next = rng(0xbeef);
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
  // odd numbers of escaped quotes and trailing backslashes matter to the string-skipping scan
  const STRINGS = [
    '',
    'a',
    'amount:12345678901234567890,',
    '"quoted" \\ back',
    'one " quote',
    'ends \\',
    '\\"',
    ':12345678901234567890"',
    'é ünï 😀',
    '[1234567890123456789]',
    'x\ny\tz',
    '\u0001',
  ];
  function value(depth: number): unknown {
    const r = next();
    if (depth > 3 || r < 0.35) {
      return pick<unknown>([
        0,
        -1,
        42,
        1.5,
        -2.5e-3,
        1e21,
        9007199254740991,
        -9007199254740991,
        1000000000000000,
        9007199254740993n,
        18446744073709551615n,
        -12345678901234567890n,
        12345678901234567n,
        true,
        false,
        null,
        pick(STRINGS),
      ]);
    }
    if (r < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = 0; i < Math.floor(next() * 4); i++) o[`${pick(STRINGS)}${i}`] = value(depth + 1);
    return o;
  }
  /** JSON text with bigints as bare integers, and random whitespace. */
  function write(v: unknown): string {
    const ws = (): string => pick(['', ' ', '\n', '\t ', '\r\n']);
    if (typeof v === 'bigint') return v.toString();
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${write(x)}${ws()}`).join(`,${ws()}`)}]`;
    if (v !== null && typeof v === 'object')
      return `{${Object.entries(v)
        .map(([k, x]) => `${ws()}${JSON.stringify(k)}${ws()}:${ws()}${write(x)}`)
        .join(',')}${ws()}}`;
    return JSON.stringify(v);
  }

  it('parseJsonExact (regex-marked fast path) and the character reader agree with the source on 2000 documents', () => {
    for (let i = 0; i < 2000; i++) {
      const v = value(0);
      const text = write(v);
      expect(parseJsonExact(text), text).to.deep.equal(v);
      expect(parseJsonByCharacter(text), text).to.deep.equal(v);
      // the fast path itself holds (not rescued by the fallback): the marked text is valid JSON
      const marked = markLongIntegers(text);
      expect(marked, text).to.be.a('string');
      expect(() => JSON.parse(marked!), text).to.not.throw();
    }
  });

  it('invalid JSON is refused by both, including leading zeros and a forged mark', () => {
    for (const bad of [
      '{"a":0000000000000000001}',
      '[01]',
      '{"a":1,}',
      '[1 2]',
      '"\u0001"',
      '{"a":"\\u0000123456789012345678"',
      '[12345678901234567.]',
    ]) {
      expect(() => parseJsonExact(bad), bad).to.throw(/MALFORMED_JSON/);
      expect(() => parseJsonByCharacter(bad), bad).to.throw(/MALFORMED_JSON/);
    }
    // strings with escapes next to long numbers, digit runs inside strings, "__proto__" keys
    const obj = (entries: Array<[string, unknown]>): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of entries)
        Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
      return o;
    };
    const edge: Array<[string, unknown]> = [
      [
        '{"a\\\\":12345678901234567890,"b":"x\\"1234567890123456789\\""}',
        { 'a\\': 12345678901234567890n, b: 'x"1234567890123456789"' },
      ],
      ['["\\\\",-98765432109876543210,"\\\\\\"",1]', ['\\', -98765432109876543210n, '\\"', 1]],
      [
        '{"__proto__":12345678901234567890,"k":{"__proto__":{"x":99999999999999999999}}}',
        obj([
          ['__proto__', 12345678901234567890n],
          ['k', obj([['__proto__', { x: 99999999999999999999n }]])],
        ]),
      ],
      ['{"s":"a:12345678901234567890,","n":1234567890123456}', { s: 'a:12345678901234567890,', n: 1234567890123456 }],
    ];
    for (const [text, want] of edge) {
      const got = parseJsonExact(text) as Record<string, unknown>;
      expect(got, text).to.deep.equal(want);
      expect(parseJsonByCharacter(text), text).to.deep.equal(want);
      if (typeof got === 'object' && !Array.isArray(got)) expect(Object.getPrototypeOf(got)).to.equal(Object.prototype);
    }
    // a real string that looks like a mark stays a string
    expect(parseJsonExact('{"s":"\\u0000123456789012345678","n":123456789012345678901}')).to.deep.equal({
      s: '\u0000123456789012345678',
      n: 123456789012345678901n,
    });
  });
});
