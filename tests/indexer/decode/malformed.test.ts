// Bad input is refused with a named code, never decoded into a guess.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { expect } from 'chai';
import { isOncepayError } from '../../../common/errors';
import { DECODE_CODES, decodeTransaction, readTransactionsInput } from '../../../indexer/decode';
import { clone, fixture, FIXTURES, REAL } from './helpers';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixture JSON edited field by field; a wrong path throws or fails the assertion that follows
type Tx = Record<string, any>;

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isOncepayError(e)) return e.code;
    throw e;
  }
  return 'no error';
}

const json = (name = 'spl-two-transfers'): Tx => clone(fixture(name, 'json')) as Tx;
const parsed = (name = 'spl-two-transfers'): Tx => clone(fixture(name, 'jsonParsed')) as Tx;
const real = (): Tx =>
  readTransactionsInput(readFileSync(join(REAL, 'mainnet-2aoWC4-v0-usdc-sol-inner.base64.json'), 'utf8'))[0] as Tx;
const decode = (tx: unknown) => (): unknown => decodeTransaction(tx);

describe('decode: malformed input → named codes', () => {
  it('not an object', () => {
    for (const v of [null, 42, 'tx', [1, 2]]) expect(codeOf(decode(v))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });

  it('an unknown transaction version', () => {
    const tx = json('v0-lookup-table');
    tx.version = 1;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.UNSUPPORTED_VERSION);
  });

  it('a binary transaction whose version byte says v1', () => {
    const tx = real();
    const bytes = Buffer.from(tx.transaction[0], 'base64');
    const at = 1 + 64 * bytes[0]; // after the signatures
    expect(bytes[at]).to.equal(0x80);
    bytes[at] = 0x81;
    tx.transaction[0] = bytes.toString('base64');
    delete tx.version;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.UNSUPPORTED_VERSION);
  });

  it('a truncated binary transaction, and one with trailing bytes', () => {
    const tx = real();
    const bytes = Buffer.from(tx.transaction[0], 'base64');
    tx.transaction[0] = bytes.subarray(0, bytes.length - 5).toString('base64');
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
    tx.transaction[0] = Buffer.concat([bytes, Buffer.from([0])]).toString('base64');
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });

  it('unsupported encodings', () => {
    const tx = real();
    tx.transaction = [tx.transaction[0], 'base32'];
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.UNSUPPORTED_ENCODING);
    tx.transaction = 'AQID';
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.UNSUPPORTED_ENCODING);
  });

  it('the version field disagreeing with the bytes', () => {
    const tx = real();
    tx.version = 'legacy';
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });

  it('meta null: success cannot be told from failure', () => {
    const tx = json();
    tx.meta = null;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MISSING_META);
  });

  it('a missing or malformed signature', () => {
    const tx = json();
    tx.transaction.signatures = [];
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
    tx.transaction.signatures = ['3UVYmECPPMZSCqWKfENfuoTv51fTDTWicX9xmBD2euKe']; // a 32-byte address, not a signature
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });

  it('indices out of range: programIdIndex, an account, an innerInstructions entry', () => {
    let tx = json();
    tx.transaction.message.instructions[0].programIdIndex = 99;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
    tx = json();
    tx.transaction.message.instructions[0].accounts[2] = 99;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
    tx = json('inner-cpi-sparse');
    tx.meta.innerInstructions[0].index = 4; // there are 4 outer instructions: 0..3
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });

  it('two innerInstructions entries for one outer instruction (their receipts would share a key)', () => {
    const tx = json('inner-cpi-sparse');
    tx.meta.innerInstructions[1].index = tx.meta.innerInstructions[0].index;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });

  it('a legacy transaction with loaded addresses', () => {
    const tx = json();
    tx.meta.loadedAddresses = { writable: ['3UVYmECPPMZSCqWKfENfuoTv51fTDTWicX9xmBD2euKe'], readonly: [] };
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });

  it('token instruction data too short, or not base58', () => {
    const tx = json();
    tx.transaction.message.instructions[1].data = bs58.encode(Buffer.from([3, 1, 2, 3]));
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_INSTRUCTION);
    tx.transaction.message.instructions[1].data = '0OIl';
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_INSTRUCTION);
  });

  it('a transfer with too few accounts', () => {
    const tx = json();
    tx.transaction.message.instructions[1].accounts = tx.transaction.message.instructions[1].accounts.slice(0, 2);
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_INSTRUCTION);
  });

  it('garbage data for a program we do not decode is ignored, not an error', () => {
    const tx = json('spl-transfer-reference');
    tx.transaction.message.instructions[0].data = '0OIl'; // compute budget instruction
    expect(decodeTransaction(tx)).to.have.length(1);
  });

  it('jsonParsed amounts: negative, above u64::MAX, fractional, missing → AMOUNT_OUT_OF_RANGE', () => {
    for (const bad of ['-5', '18446744073709551616', '1.5', 1.5, -1, null, '']) {
      const tx = parsed();
      tx.transaction.message.instructions[1].parsed.info.amount = bad;
      expect(codeOf(decode(tx)), String(bad)).to.equal(DECODE_CODES.AMOUNT_OUT_OF_RANGE);
    }
    // u64::MAX itself is an amount (the spl-u64-max fixture moves it for real); here the balances did not move it,
    // so the parsed amount gets past the range check and is refused by the balance check.
    const tx = parsed();
    tx.transaction.message.instructions[1].parsed.info.amount = '18446744073709551615';
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.BALANCE_MISMATCH);
  });

  it('jsonParsed lamports given as an imprecise JSON number', () => {
    const tx = parsed('system-transfer-with-seed');
    tx.transaction.message.instructions[0].parsed.info.lamports = 2 ** 60;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.AMOUNT_IMPRECISE);
    tx.transaction.message.instructions[0].parsed.info.lamports = 2n ** 60n; // what the exact reader gives
    expect(decodeTransaction(tx)[0].amount).to.equal(2n ** 60n);
  });

  it('transferCheckedWithFee with a fee above the amount', () => {
    const tx = json('token2022-transfer-fee');
    const data = Buffer.from(bs58.decode(tx.transaction.message.instructions[0].data));
    data.writeBigUInt64LE(50_000_000n, 11); // fee 50 > amount 40
    tx.transaction.message.instructions[0].data = bs58.encode(data);
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.AMOUNT_OUT_OF_RANGE);
    const p = parsed('token2022-transfer-fee');
    p.transaction.message.instructions[0].parsed.info.feeAmount.amount = '40000001';
    expect(codeOf(decode(p))).to.equal(DECODE_CODES.AMOUNT_OUT_OF_RANGE);
  });

  it('a parsed transfer missing a field', () => {
    const tx = parsed();
    delete tx.transaction.message.instructions[0].parsed.info.destination;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_INSTRUCTION);
  });

  it('the RPC docs example (abbreviated: programIdIndex 4 with one account key) is refused, not guessed at', () => {
    const [tx] = readTransactionsInput(
      readFileSync(join(FIXTURES, 'docs', 'rpc-docs-gettransaction-example.json'), 'utf8'),
    );
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });

  it('errors say where: the instruction path is in the message and context', () => {
    const tx = json();
    tx.transaction.message.instructions[1].data = bs58.encode(Buffer.from([3, 1]));
    try {
      decodeTransaction(tx);
      expect.fail('should throw');
    } catch (e) {
      expect(isOncepayError(e)).to.equal(true);
      expect((e as Error).message).to.contain('transaction.message.instructions[1]');
    }
  });
});

describe('decode: failure is read from err or status', () => {
  it('status {"Err":…} with err absent → no receipts; neither field → refused', () => {
    const tx = clone(fixture('spl-two-transfers', 'json')) as Tx;
    delete tx.meta.err;
    tx.meta.status = { Err: { InstructionError: [0, { Custom: 1 }] } };
    expect(decodeTransaction(tx)).to.deep.equal([]);
    tx.meta.status = { Ok: null };
    expect(decodeTransaction(tx)).to.have.length(2);
    delete tx.meta.status;
    expect(codeOf(decode(tx))).to.equal(DECODE_CODES.MALFORMED_TRANSACTION);
  });
});
