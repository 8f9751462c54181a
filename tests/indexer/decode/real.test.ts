// Real getTransaction results (mainnet and devnet, base64 encoding) as an RPC node returned them; see
// tests/fixtures/transactions/README.md for where each was published. The expected receipts were checked by hand
// against the transactions' own pre/post balances.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { expect } from 'chai';
import { decodeTransaction, readTransactionsInput, receiptToJson, TOP_LEVEL, type Receipt } from '../../../indexer/decode';
import { clone, REAL, realFiles } from './helpers';

function load(file: string): Record<string, unknown> {
  const [tx] = readTransactionsInput(readFileSync(join(REAL, file), 'utf8'));
  return tx as Record<string, unknown>;
}

function row(r: Receipt): unknown[] {
  return [r.ixIndex, r.innerIndex, r.program, r.kind, r.mint, r.source, r.destination, r.destinationOwner, r.amount];
}

/** The same transaction in the `json` encoding, built with web3.js's own message parser (an independent reader). */
function asJsonEncoding(tx: Record<string, unknown>): Record<string, unknown> {
  const [b64] = tx.transaction as [string, string];
  const vt = VersionedTransaction.deserialize(Buffer.from(b64, 'base64'));
  const m = vt.message;
  const message: Record<string, unknown> = {
    accountKeys: m.staticAccountKeys.map((k) => k.toBase58()),
    header: m.header,
    instructions: m.compiledInstructions.map((ix) => ({
      programIdIndex: ix.programIdIndex,
      accounts: [...ix.accountKeyIndexes],
      data: bs58.encode(ix.data),
      stackHeight: null,
    })),
    recentBlockhash: m.recentBlockhash,
  };
  if (m.version === 0) message.addressTableLookups = m.addressTableLookups.map((l) => ({ accountKey: l.accountKey.toBase58(), writableIndexes: [...l.writableIndexes], readonlyIndexes: [...l.readonlyIndexes] }));
  return { ...clone(tx), transaction: { message, signatures: vt.signatures.map((s) => bs58.encode(s)) } };
}

describe('decode: real mainnet/devnet transactions (base64 encoding)', () => {
  it('mainnet 2aoWC4…: v0, lookup tables, three transfers as CPIs under one outer instruction', () => {
    const rs = decodeTransaction(load('mainnet-2aoWC4-v0-usdc-sol-inner.base64.json'));
    const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    expect(rs.map(row)).to.deep.equal([
      [2, 1, 'spl-token', 'transferChecked', USDC, 'BT72p68Jp5eJUpuHThxSoeTRS9p4upTM8969X79GeQRF', 'E6GtXLPfi351xWpxXMBnqQUaHvQNkuz8Z5wfnmuRD81G', '41fkvu8LhJDqkF325GTz6HuQRvZmCXVtYoYWPZeVCdux', 16_838_513n],
      [2, 2, 'spl-token', 'transfer', USDC, 'E6GtXLPfi351xWpxXMBnqQUaHvQNkuz8Z5wfnmuRD81G', '917TbE5DbzFzzGimezHfqBJWAsy4SL3UU5BzJNcVhXJ', '3CznQLcJWpyNKrYyq7qCvZsHn19csgB8g5wvisx4us47', 4_608_152_451n],
      [2, 3, 'system', 'systemTransfer', 'SOL', '41fkvu8LhJDqkF325GTz6HuQRvZmCXVtYoYWPZeVCdux', '3RY3ngufsn1aPSWE46Ga7sX5pZi2KPCvZG5uGS6TFLZJ', '3RY3ngufsn1aPSWE46Ga7sX5pZi2KPCvZG5uGS6TFLZJ', 2_460_497n],
    ]);
    // 3RY3… is only in meta.loadedAddresses.writable: 7 static keys, then 4 loaded writable, then 4 loaded readonly
    expect(rs[2].accountKeys).to.have.length(15);
    expect(rs[2].accountKeys!.indexOf('3RY3ngufsn1aPSWE46Ga7sX5pZi2KPCvZG5uGS6TFLZJ')).to.equal(10);
    expect(rs[0].signature).to.equal('2aoWC4uMT9zznC5m3ALE45Rb9YtmD6sNCabSgz4vACC9fKmwjaTooKVsn7mgoJ2Er3pa2xi8rbLcPzogNVwV5KSv');
    expect(rs[0].slot).to.equal(334_182_963n);
  });

  it('mainnet 66iwZv…: BONK via plain transfer (mint from token balances), 3.17e15 base units', () => {
    const rs = decodeTransaction(load('mainnet-66iwZv-bonk-transfer.base64.json'));
    expect(rs.map(row)).to.deep.equal([
      [1, TOP_LEVEL, 'spl-token', 'transfer', 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263', 'JDPR4RP95CdtwLcjqe3E4cVthzCmkASfs4yamN9MZyPR', 'DiQuYy9JmNnDRxUaRMAazcQ7yqVep6CrZbcbP2yBpuXY', 'GtxgnRiSfBzahR9xb7hvYbWq3Uzez7hpCz2BJbCLxKdq', 3_170_652_014_400_000n],
    ]);
  });

  it('devnet 5ZrG8i…: USDC transferChecked', () => {
    const rs = decodeTransaction(load('devnet-5ZrG8i-usdc-transferchecked.base64.json'));
    expect(rs.map(row)).to.deep.equal([
      [0, TOP_LEVEL, 'spl-token', 'transferChecked', '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', 'DvSgNMRxVSMBpLp4hZeBrmQo8ZRFne72actTZ3PYE3AA', '6Yg9GttAiHjbHMoiomBuGBDULP7HxQyez45dEiR9CJqw', '91t4uSdtBiftqsB24W2fRXFCXjUyc6xY3WMGFedAaTHh', 200_000n],
    ]);
  });

  it('devnet SOL transfers', () => {
    expect(decodeTransaction(load('devnet-5U2Yvv-sol-transfer.base64.json')).map(row)).to.deep.equal([
      [0, TOP_LEVEL, 'system', 'systemTransfer', 'SOL', '9B5XszUGdMaxCZ7uSQhPzdks5ZQSmWxrmzCSvtJ6Ns6g', 'Hzn3n914JaSpnxo5mBbmuCDmGL6mxWN9Ac2HzEXFSGtb', 'Hzn3n914JaSpnxo5mBbmuCDmGL6mxWN9Ac2HzEXFSGtb', 1_000_000_000n],
    ]);
    expect(decodeTransaction(load('devnet-3XRGeu-sol-transfer.base64.json')).map(row)).to.deep.equal([
      [0, TOP_LEVEL, 'system', 'systemTransfer', 'SOL', 'Hzn3n914JaSpnxo5mBbmuCDmGL6mxWN9Ac2HzEXFSGtb', '91t4uSdtBiftqsB24W2fRXFCXjUyc6xY3WMGFedAaTHh', '91t4uSdtBiftqsB24W2fRXFCXjUyc6xY3WMGFedAaTHh', 120_000_000n],
    ]);
  });

  it('the signature read from the bytes is the one the transaction is known by', () => {
    for (const f of realFiles()) {
      const prefix = f.split('-')[1];
      for (const r of decodeTransaction(load(f))) expect(r.signature.startsWith(prefix), f).to.equal(true);
    }
  });

  it('each real transaction re-encoded as `json` (by web3.js) decodes to the same receipts', () => {
    for (const f of realFiles()) {
      const tx = load(f);
      expect(decodeTransaction(asJsonEncoding(tx)).map(receiptToJson), f).to.deep.equal(decodeTransaction(tx).map(receiptToJson));
    }
  });

  it('the same real transaction marked failed yields nothing', () => {
    const tx = clone(load('mainnet-2aoWC4-v0-usdc-sol-inner.base64.json'));
    (tx.meta as Record<string, unknown>).err = { InstructionError: [2, { Custom: 1 }] };
    expect(decodeTransaction(tx)).to.deep.equal([]);
  });
});
