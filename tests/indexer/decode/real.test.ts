// Real getTransaction results (mainnet and devnet, base64 encoding) as an RPC node returned them; see
// tests/fixtures/transactions/README.md for where each was published. The expected receipts were checked by hand
// against the transactions' own pre/post balances.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { expect } from 'chai';
import {
  decodeTransaction,
  readTransactionsInput,
  receiptToJson,
  TOP_LEVEL,
  type Receipt,
} from '../../../indexer/decode';
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
  if (m.version === 0)
    message.addressTableLookups = m.addressTableLookups.map((l) => ({
      accountKey: l.accountKey.toBase58(),
      writableIndexes: [...l.writableIndexes],
      readonlyIndexes: [...l.readonlyIndexes],
    }));
  return { ...clone(tx), transaction: { message, signatures: vt.signatures.map((s) => bs58.encode(s)) } };
}

describe('decode: real mainnet/devnet transactions (base64 encoding)', () => {
  it('mainnet 2aoWC4…: v0, lookup tables, three transfers as CPIs under one outer instruction', () => {
    const rs = decodeTransaction(load('mainnet-2aoWC4-v0-usdc-sol-inner.base64.json'));
    const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    expect(rs.map(row)).to.deep.equal([
      [
        2,
        1,
        'spl-token',
        'transferChecked',
        USDC,
        'BT72p68Jp5eJUpuHThxSoeTRS9p4upTM8969X79GeQRF',
        'E6GtXLPfi351xWpxXMBnqQUaHvQNkuz8Z5wfnmuRD81G',
        '41fkvu8LhJDqkF325GTz6HuQRvZmCXVtYoYWPZeVCdux',
        16_838_513n,
      ],
      [
        2,
        2,
        'spl-token',
        'transfer',
        USDC,
        'E6GtXLPfi351xWpxXMBnqQUaHvQNkuz8Z5wfnmuRD81G',
        '917TbE5DbzFzzGimezHfqBJWAsy4SL3UU5BzJNcVhXJ',
        '3CznQLcJWpyNKrYyq7qCvZsHn19csgB8g5wvisx4us47',
        4_608_152_451n,
      ],
      [
        2,
        3,
        'system',
        'systemTransfer',
        'SOL',
        '41fkvu8LhJDqkF325GTz6HuQRvZmCXVtYoYWPZeVCdux',
        '3RY3ngufsn1aPSWE46Ga7sX5pZi2KPCvZG5uGS6TFLZJ',
        '3RY3ngufsn1aPSWE46Ga7sX5pZi2KPCvZG5uGS6TFLZJ',
        2_460_497n,
      ],
    ]);
    // 3RY3… is only in meta.loadedAddresses.writable: 7 static keys, then 4 loaded writable, then 4 loaded readonly
    expect(rs[2].accountKeys).to.have.length(15);
    expect(rs[2].accountKeys!.indexOf('3RY3ngufsn1aPSWE46Ga7sX5pZi2KPCvZG5uGS6TFLZJ')).to.equal(10);
    expect(rs[0].signature).to.equal(
      '2aoWC4uMT9zznC5m3ALE45Rb9YtmD6sNCabSgz4vACC9fKmwjaTooKVsn7mgoJ2Er3pa2xi8rbLcPzogNVwV5KSv',
    );
    expect(rs[0].slot).to.equal(334_182_963n);
  });

  it('mainnet 66iwZv…: BONK via plain transfer (mint from token balances), 3.17e15 base units', () => {
    const rs = decodeTransaction(load('mainnet-66iwZv-bonk-transfer.base64.json'));
    expect(rs.map(row)).to.deep.equal([
      [
        1,
        TOP_LEVEL,
        'spl-token',
        'transfer',
        'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263',
        'JDPR4RP95CdtwLcjqe3E4cVthzCmkASfs4yamN9MZyPR',
        'DiQuYy9JmNnDRxUaRMAazcQ7yqVep6CrZbcbP2yBpuXY',
        'GtxgnRiSfBzahR9xb7hvYbWq3Uzez7hpCz2BJbCLxKdq',
        3_170_652_014_400_000n,
      ],
    ]);
  });

  it('devnet 5ZrG8i…: USDC transferChecked', () => {
    const rs = decodeTransaction(load('devnet-5ZrG8i-usdc-transferchecked.base64.json'));
    expect(rs.map(row)).to.deep.equal([
      [
        0,
        TOP_LEVEL,
        'spl-token',
        'transferChecked',
        '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
        'DvSgNMRxVSMBpLp4hZeBrmQo8ZRFne72actTZ3PYE3AA',
        '6Yg9GttAiHjbHMoiomBuGBDULP7HxQyez45dEiR9CJqw',
        '91t4uSdtBiftqsB24W2fRXFCXjUyc6xY3WMGFedAaTHh',
        200_000n,
      ],
    ]);
  });

  it('devnet SOL transfers', () => {
    expect(decodeTransaction(load('devnet-5U2Yvv-sol-transfer.base64.json')).map(row)).to.deep.equal([
      [
        0,
        TOP_LEVEL,
        'system',
        'systemTransfer',
        'SOL',
        '9B5XszUGdMaxCZ7uSQhPzdks5ZQSmWxrmzCSvtJ6Ns6g',
        'Hzn3n914JaSpnxo5mBbmuCDmGL6mxWN9Ac2HzEXFSGtb',
        'Hzn3n914JaSpnxo5mBbmuCDmGL6mxWN9Ac2HzEXFSGtb',
        1_000_000_000n,
      ],
    ]);
    expect(decodeTransaction(load('devnet-3XRGeu-sol-transfer.base64.json')).map(row)).to.deep.equal([
      [
        0,
        TOP_LEVEL,
        'system',
        'systemTransfer',
        'SOL',
        'Hzn3n914JaSpnxo5mBbmuCDmGL6mxWN9Ac2HzEXFSGtb',
        '91t4uSdtBiftqsB24W2fRXFCXjUyc6xY3WMGFedAaTHh',
        '91t4uSdtBiftqsB24W2fRXFCXjUyc6xY3WMGFedAaTHh',
        120_000_000n,
      ],
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
      expect(decodeTransaction(asJsonEncoding(tx)).map(receiptToJson), f).to.deep.equal(
        decodeTransaction(tx).map(receiptToJson),
      );
    }
  });

  it('the same real transaction marked failed yields nothing', () => {
    const tx = clone(load('mainnet-2aoWC4-v0-usdc-sol-inner.base64.json'));
    (tx.meta as Record<string, unknown>).err = { InstructionError: [2, { Custom: 1 }] };
    expect(decodeTransaction(tx)).to.deep.equal([]);
  });
});

// Real mainnet transactions in the jsonParsed encoding, from before v0 existed (no `version`, no stackHeight),
// as published in p2p-org/key-app-kit-swift's parser test resources (see the fixtures README).
const JSON_PARSED = join(REAL, 'jsonParsed');

function loadParsed(file: string): Record<string, unknown> {
  const [tx] = readTransactionsInput(readFileSync(join(JSON_PARSED, file), 'utf8'));
  return tx as Record<string, unknown>;
}

describe('decode: real mainnet transactions (jsonParsed encoding)', () => {
  it('3P8JT1…: a two-hop swap — System and token transfers as CPIs, mintTo noise, nested unparsed programs', () => {
    const rs = decodeTransaction(loadParsed('mainnet-3P8JT1-p2p-swap-orca-ok.json'));
    expect(rs.map((r) => [r.ixIndex, r.innerIndex, r.kind, r.source, r.destination, r.amount])).to.deep.equal([
      [
        2,
        0,
        'systemTransfer',
        'FG4Y3yX4AAchp1HvNZ7LfzFTewF2f6nDoMDCohTFrdpT',
        'AvVWrFKqscRzVbdwh4eZHfW4N3fFA71whwVmVCHmLa23',
        2_039_280n,
      ],
      [
        3,
        1,
        'transfer',
        'BChCFxutjFZbLzo7RFdJFFLxK61wQZGPUzQUhaRUbyZq',
        '2teAyRLAU716sCj9v2634Wi4wcLqtRvV9upXaRvDSFm1',
        510_069n,
      ],
      [
        3,
        3,
        'transfer',
        'FTrSPUnMKmdKkNekKvVUQY1nunr2kWwohMHmBusd79Vj',
        'AvVWrFKqscRzVbdwh4eZHfW4N3fFA71whwVmVCHmLa23',
        223_283_008n,
      ],
      [
        3,
        5,
        'transfer',
        'AvVWrFKqscRzVbdwh4eZHfW4N3fFA71whwVmVCHmLa23',
        'HQ2XUmQefvBdpN8nseBSWNP2D1crncodLL73AWnYBiSy',
        223_283_008n,
      ],
      [
        3,
        7,
        'transfer',
        '8y8X4JuZn1MckRo5J6rirpr2Dxj1RKQshj7VzuX6dMUw',
        'HqVHZin8vVpg58EaLp6hMMpxdrKhTiDYgxZGc32y58tm',
        237_472_414n,
      ],
      [
        5,
        TOP_LEVEL,
        'systemTransfer',
        '9zRnk58ydEKxQ4BKyETG8uQQecppcxMvQaJWLkjocvPm',
        'FG4Y3yX4AAchp1HvNZ7LfzFTewF2f6nDoMDCohTFrdpT',
        2_039_280n,
      ],
    ]);
    // HqVH… (temporary wrapped SOL) is created and closed inside the transaction, so it has no token balance:
    // the mint of that plain `transfer` comes from the source's balance
    expect(rs[4].mint).to.equal('So11111111111111111111111111111111111111112');
    expect(rs[2].mint).to.equal('7dHbWXmci3dT8UFYWYZweBLXgycu7Y3iL6trKn1Y7ARj');
  });

  it('a real failed swap (InstructionError Custom 16) yields nothing', () => {
    const tx = loadParsed('mainnet-376Dxe-swap-orca-error.json');
    expect((tx.meta as { err: unknown }).err).to.deep.equal({ InstructionError: [3, { Custom: 16 }] });
    expect(decodeTransaction(tx)).to.deep.equal([]);
  });

  it('real create-account and close-account transactions yield nothing', () => {
    expect(decodeTransaction(loadParsed('mainnet-2smHME-create-account-ok.json'))).to.deep.equal([]);
    expect(decodeTransaction(loadParsed('mainnet-2xVgfW-close-account-ok.json'))).to.deep.equal([]);
  });

  it('every real jsonParsed transaction: token receipts agree with the recorded token balances', () => {
    for (const f of readdirSync(JSON_PARSED).filter((x) => x.endsWith('.json'))) {
      const tx = loadParsed(f) as {
        transaction: { message: { accountKeys: Array<{ pubkey: string }> } };
        meta: { preTokenBalances?: Bal[]; postTokenBalances?: Bal[] };
      };
      const keys = tx.transaction.message.accountKeys.map((k) => k.pubkey);
      const pre = tx.meta.preTokenBalances ?? [];
      const post = tx.meta.postTokenBalances ?? [];
      const net = new Map<string, bigint>();
      for (const r of decodeTransaction(tx)) {
        if (r.program === 'system') continue;
        net.set(r.destination, (net.get(r.destination) ?? 0n) + r.amount);
        net.set(r.source, (net.get(r.source) ?? 0n) - r.amount);
      }
      for (const [address, change] of net) {
        const i = keys.indexOf(address);
        const before = pre.find((b) => b.accountIndex === i);
        const after = post.find((b) => b.accountIndex === i);
        if (!before && !after) continue; // created and closed inside the transaction (temporary wrapped SOL)
        const delta = BigInt(after?.uiTokenAmount.amount ?? '0') - BigInt(before?.uiTokenAmount.amount ?? '0');
        expect(delta, `${f} ${address}`).to.equal(change);
      }
    }
  });
});

interface Bal {
  accountIndex: number;
  uiTokenAmount: { amount: string };
}
