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

const one = (): string => JSON.stringify(fixture('spl-two-transfers', 'json'), (_k, v) => (typeof v === 'bigint' ? Number(v) : v));
const two = (): string => JSON.stringify(fixture('spl-transfer-reference', 'json'), (_k, v) => (typeof v === 'bigint' ? Number(v) : v));

describe('decode: reading input', () => {
  it('accepts a bare result, an RPC envelope, an array of either (an RPC batch reply), and JSON lines', () => {
    const sig = (items: unknown[]): string[] => items.flatMap((t) => decodeTransaction(t)).map((r) => r.signature);
    const a = signatureOf('spl-two-transfers');
    const b = signatureOf('spl-transfer-reference');
    expect(sig(readTransactionsInput(one()))).to.deep.equal([a, a]);
    expect(sig(readTransactionsInput(`{"jsonrpc":"2.0","result":${one()},"id":7}`))).to.deep.equal([a, a]);
    expect(sig(readTransactionsInput(`[${one()},${two()}]`))).to.deep.equal([a, a, b]);
    expect(sig(readTransactionsInput(`[{"jsonrpc":"2.0","result":${one()},"id":1},{"jsonrpc":"2.0","result":${two()},"id":2}]`))).to.deep.equal([a, a, b]);
    expect(sig(readTransactionsInput(`${one()}\n\n{"jsonrpc":"2.0","result":${two()},"id":2}\n`))).to.deep.equal([a, a, b]);
    expect(readTransactionsInput('  \n')).to.deep.equal([]);
    expect(sig(readTransactionsInput(`\ufeff${one()}`))).to.deep.equal([a, a]); // a byte-order mark is dropped
  });

  it('decodeTransaction accepts an RPC envelope as well as its result', () => {
    const tx = fixture('spl-two-transfers', 'json');
    expect(decodeTransaction({ jsonrpc: '2.0', id: 1, result: tx }).map(receiptToJson)).to.deep.equal(decodeTransaction(tx).map(receiptToJson));
    expect(codeOf(() => decodeTransaction({ jsonrpc: '2.0', id: 1, result: null })).code).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
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
    const { items, errors } = readTransactionsInputLenient(`[{"jsonrpc":"2.0","result":${one()},"id":1},{"jsonrpc":"2.0","result":null,"id":2}]`);
    expect(items).to.have.length(1);
    expect(errors).to.deep.equal([{ line: 1, index: 1, code: DECODE_CODES.TRANSACTION_NOT_FOUND, message: errors[0].message }]);
  });

  it('lenient: a broken single document is one error', () => {
    const { items, errors } = readTransactionsInputLenient('{"a": [1, 2}');
    expect(items).to.deep.equal([]);
    expect(errors.map((e) => e.code)).to.deep.equal([DECODE_CODES.MALFORMED_JSON]);
  });

  it('integers above 2^53 are read exactly (as bigint); JSON.parse would round them', () => {
    expect(parseJsonExact('{"a":18446744073709551615,"b":9007199254740993,"c":9007199254740991,"d":1.5,"e":-3}')).to.deep.equal({
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
    const text = '{"s":"a\\"b\\\\c\\u00e9\\n","n":[0,-0,1e3,-2.5E-2,true,false,null],"__proto__":{"x":1},"nested":{"k":[[],{}]}}';
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
    expect(decodeTransaction(readTransactionsInput(text)[0]).map((r) => r.amount)).to.deep.equal([9_007_199_254_740_993n]);
    const e = codeOf(() => decodeTransaction(JSON.parse(text)));
    expect(e.code).to.equal(DECODE_CODES.AMOUNT_IMPRECISE);
    // the json encoding carries the amount in base58 instruction data: exact even through JSON.parse
    expect(decodeTransaction(JSON.parse(fixtureText('system-big-lamports', 'json'))).map((r) => r.amount)).to.deep.equal([9_007_199_254_740_993n]);
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
    expect(rs.map((r) => receiptToJson(r))).to.deep.equal([...decodeCase('spl-two-transfers', 'json'), ...decodeCase('v0-lookup-table', 'json')].map(receiptToJson));
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
    expect(readTransactionsInput(JSON.stringify(block(), (_k, v) => (typeof v === 'bigint' ? Number(v) : v)))).to.have.length(3);
  });

  it('one malformed transaction fails the block, naming which', () => {
    const b = block();
    ((b.transactions as Array<Record<string, any>>)[2].transaction.message.instructions[0] as Record<string, unknown>).programIdIndex = 99; // eslint-disable-line @typescript-eslint/no-explicit-any
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
