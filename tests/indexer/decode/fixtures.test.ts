// Receipts of transactions executed in LiteSVM (real SPL Token / Token-2022 / ATA / System programs), read in both
// RPC encodings. Each case states what a watcher must see; the two encodings must agree line for line.
import { expect } from 'chai';
import { DECODE_CODES, decodeTransaction, receiptToJson, TOP_LEVEL, type Receipt } from '../../../indexer/decode';
import { caseNames, clone, decodeCase, fixture, key, signatureOf, type Encoding } from './helpers';

const ENCODINGS: Encoding[] = ['json', 'jsonParsed'];

function brief(r: Receipt): Record<string, unknown> {
  return {
    ixIndex: r.ixIndex,
    innerIndex: r.innerIndex,
    program: r.program,
    kind: r.kind,
    mint: r.mint,
    source: r.source,
    destination: r.destination,
    destinationOwner: r.destinationOwner,
    amount: r.amount,
  };
}

describe('decode: LiteSVM fixtures', () => {
  for (const encoding of ENCODINGS) {
    describe(`${encoding} encoding`, () => {
      it('SPL transfer: mint from token balances, owner, reference appended to the instruction', () => {
        const rs = decodeCase('spl-transfer-reference', encoding);
        expect(rs.map(brief)).to.deep.equal([
          {
            ixIndex: 1,
            innerIndex: TOP_LEVEL,
            program: 'spl-token',
            kind: 'transfer',
            mint: key('mint:usdc'),
            source: key('alice:usdc'),
            destination: key('merchant:usdc'),
            destinationOwner: key('merchant'),
            amount: 12_340_000n,
          },
        ]);
        expect(rs[0].signature).to.equal(signatureOf('spl-transfer-reference'));
        expect(rs[0].references).to.deep.equal([key('reference:1')]);
        expect(rs[0].accountKeys).to.include(key('reference:1'));
        expect(rs[0].slot).to.be.a('bigint');
        expect(rs[0].blockTime).to.be.a('number');
      });

      it('two transfers to two watched addresses in one transaction → two receipts with distinct keys', () => {
        const rs = decodeCase('spl-two-transfers', encoding);
        expect(rs.map(brief)).to.deep.equal([
          {
            ixIndex: 0,
            innerIndex: TOP_LEVEL,
            program: 'spl-token',
            kind: 'transferChecked',
            mint: key('mint:usdc'),
            source: key('alice:usdc'),
            destination: key('merchant:usdc'),
            destinationOwner: key('merchant'),
            amount: 5_000_000n,
          },
          {
            ixIndex: 1,
            innerIndex: TOP_LEVEL,
            program: 'spl-token',
            kind: 'transfer',
            mint: key('mint:usdc'),
            source: key('alice:usdc'),
            destination: key('merchant2:usdc'),
            destinationOwner: key('merchant2'),
            amount: 7_000_000n,
          },
        ]);
        expect(rs[0].references).to.deep.equal([key('reference:2')]);
        expect(rs[1].references).to.deep.equal([]);
        expect(new Set(rs.map((r) => `${r.signature}/${r.ixIndex}/${r.innerIndex}`)).size).to.equal(2);
      });

      it('multisig signers do not shift source/destination and are not references', () => {
        const rs = decodeCase('spl-multisig', encoding);
        expect(rs.map((r) => [r.kind, r.source, r.destination, r.amount])).to.deep.equal([
          ['transfer', key('multisig:usdc'), key('merchant:usdc'), 3_000_000n],
          ['transferChecked', key('multisig:usdc'), key('merchant2:usdc'), 4_000_000n],
        ]);
        expect(rs[0].references).to.deep.equal([key('reference:3')]);
        expect(rs[1].references).to.deep.equal([]);
      });

      it('Token-2022 transferChecked', () => {
        const rs = decodeCase('token2022-transfer-checked', encoding);
        expect(rs.map(brief)).to.deep.equal([
          {
            ixIndex: 0,
            innerIndex: TOP_LEVEL,
            program: 'spl-token-2022',
            kind: 'transferChecked',
            mint: key('mint:t22'),
            source: key('alice:t22'),
            destination: key('merchant:t22'),
            destinationOwner: key('merchant'),
            amount: 25_000_000n,
          },
        ]);
        expect(rs[0].decimals).to.equal(6);
        expect(rs[0].fee).to.equal(undefined);
      });

      it('Token-2022 transferCheckedWithFee credits amount − fee (what arrived)', () => {
        const [r, ...rest] = decodeCase('token2022-transfer-fee', encoding);
        expect(rest).to.have.length(0);
        expect(r.kind).to.equal('transferCheckedWithFee');
        expect(r.program).to.equal('spl-token-2022');
        expect(r.mint).to.equal(key('mint:fee'));
        expect(r.destination).to.equal(key('merchant:fee'));
        expect(r.amount).to.equal(39_400_000n);
        expect(r.fee).to.equal(600_000n);
      });

      it('Token-2022 plain transferChecked on a fee mint: the unstated withheld fee is taken from the balance change', () => {
        const [r] = decodeCase('token2022-fee-mint-plain-checked', encoding);
        expect(r.kind).to.equal('transferChecked');
        expect(r.amount).to.equal(9_850_000n);
        expect(r.fee).to.equal(150_000n);
      });

      it('failed transaction → no receipts', () => {
        const tx = fixture('spl-failed', encoding);
        expect((tx.meta as Record<string, unknown>).err).to.not.equal(null);
        expect(decodeTransaction(tx)).to.deep.equal([]);
      });

      it('the same transaction with err and status cleared reaches its transfer, which its unmoved balances refute (the empty result comes from the failure)', () => {
        const tx = clone(fixture('spl-failed', encoding));
        (tx.meta as Record<string, unknown>).err = null;
        expect(decodeTransaction(tx)).to.deep.equal([]); // status still says Err
        (tx.meta as Record<string, unknown>).status = { Ok: null };
        // Now the transfer of 999,999,999,999 is decoded, and the token balances (which did not move: it failed)
        // refuse it: a "successful" transaction whose instruction says more than its balances show is not credited.
        let code: string | undefined;
        try {
          decodeTransaction(tx);
        } catch (e) {
          code = (e as { code?: string }).code;
          expect((e as { context: Record<string, unknown> }).context).to.deep.include({
            decoded: '-999999999999',
            actual: '0',
          });
        }
        expect(code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
      });

      it('create-account / initialize / ATA create / mintTo / approve / burn → no receipts', () => {
        expect(decodeCase('noise-create-mint-burn', encoding)).to.deep.equal([]);
      });

      it('inner (CPI) transfers: innerIndex is the position under the entry whose index is the outer instruction', () => {
        const rs = decodeCase('inner-cpi-sparse', encoding);
        expect(rs.map((r) => [r.ixIndex, r.innerIndex, r.kind, r.source, r.destination, r.amount])).to.deep.equal([
          // ATA create on a pre-funded address tops it up with a System transfer CPI
          [1, 1, 'systemTransfer', rs[0].source, key('dave:usdc'), rs[0].amount],
          // recoverNested moves the nested account's tokens with a transferChecked CPI
          [3, 0, 'transferChecked', key('carol:usdc:nested'), key('carol:usdc'), 2_500_000n],
        ]);
        expect(rs[0].mint).to.equal('SOL');
        expect(rs[1].destinationOwner).to.equal(key('carol'));
      });

      it('innerIndex does not depend on the order or density of meta.innerInstructions', () => {
        const tx = clone(fixture('inner-cpi-sparse', encoding));
        const meta = tx.meta as { innerInstructions: unknown[] };
        const expected = decodeTransaction(tx).map(receiptToJson);
        meta.innerInstructions.reverse();
        expect(decodeTransaction(tx).map(receiptToJson)).to.deep.equal(expected);
      });

      it('v0 with a lookup table: destination and reference only in loadedAddresses', () => {
        const tx = fixture('v0-lookup-table', encoding);
        expect(tx.version).to.equal(0);
        const staticKeys = (tx.transaction as { message: { accountKeys: unknown[] } }).message.accountKeys.map((k) =>
          typeof k === 'string'
            ? k
            : (k as { pubkey: string; source: string }).source === 'transaction'
              ? (k as { pubkey: string }).pubkey
              : null,
        );
        expect(staticKeys).to.not.include(key('erin:usdc'));
        const rs = decodeTransaction(tx);
        expect(rs.map(brief)).to.deep.equal([
          {
            ixIndex: 0,
            innerIndex: TOP_LEVEL,
            program: 'spl-token',
            kind: 'transferChecked',
            mint: key('mint:usdc'),
            source: key('alice:usdc'),
            destination: key('erin:usdc'),
            destinationOwner: key('erin'),
            amount: 9_990_000n,
          },
          {
            ixIndex: 1,
            innerIndex: TOP_LEVEL,
            program: 'system',
            kind: 'systemTransfer',
            mint: 'SOL',
            source: rs[1].source,
            destination: key('erin'),
            destinationOwner: key('erin'),
            amount: 1_234_567n,
          },
        ]);
        expect(rs[0].references).to.deep.equal([key('reference:8')]);
      });

      it('System transfer above 2^53 lamports stays exact', () => {
        const [r] = decodeCase('system-big-lamports', encoding);
        expect(r.amount).to.equal(9_007_199_254_740_993n);
        expect(receiptToJson(r)).to.contain('"amount":"9007199254740993"');
      });

      it('System transferWithSeed: source is the derived account', () => {
        const [r] = decodeCase('system-transfer-with-seed', encoding);
        expect([r.kind, r.source, r.destination, r.amount]).to.deep.equal([
          'systemTransfer',
          key('seed-derived'),
          key('grace'),
          7_000_000n,
        ]);
      });

      it('u64::MAX transferChecked is exact', () => {
        const [r] = decodeCase('spl-u64-max', encoding);
        expect(r.amount).to.equal(18_446_744_073_709_551_615n);
        expect(receiptToJson(r)).to.contain('"amount":"18446744073709551615"');
      });
    });
  }

  it('json and jsonParsed encodings of every fixture give the same receipt lines', () => {
    const names = caseNames();
    expect(names.length).to.be.greaterThan(10);
    for (const name of names) {
      const a = decodeCase(name, 'json').map(receiptToJson);
      const b = decodeCase(name, 'jsonParsed').map(receiptToJson);
      expect(b, name).to.deep.equal(a);
    }
  });

  it('jsonParsed instructions the RPC could not parse ({programId, accounts, data}) decode like parsed ones', () => {
    for (const name of caseNames()) {
      const raw = fixture(name, 'json') as {
        transaction: { message: { accountKeys: string[]; instructions: RawIx[] } };
        meta: {
          loadedAddresses?: { writable: string[]; readonly: string[] };
          innerInstructions: Array<{ index: number; instructions: RawIx[] }>;
        };
      };
      const keys = [
        ...raw.transaction.message.accountKeys,
        ...(raw.meta.loadedAddresses?.writable ?? []),
        ...(raw.meta.loadedAddresses?.readonly ?? []),
      ];
      const unparsed = (ix: RawIx, stackHeight: unknown): Record<string, unknown> => ({
        accounts: ix.accounts.map((i) => keys[i]),
        data: ix.data,
        programId: keys[ix.programIdIndex],
        stackHeight,
      });
      const tx = clone(fixture(name, 'jsonParsed')) as {
        transaction: { message: { instructions: unknown[] } };
        meta: { innerInstructions: Array<{ index: number; instructions: unknown[] }> };
      };
      tx.transaction.message.instructions = raw.transaction.message.instructions.map((ix) => unparsed(ix, null));
      tx.meta.innerInstructions = raw.meta.innerInstructions.map((e) => ({
        index: e.index,
        instructions: e.instructions.map((ix) => unparsed(ix, ix.stackHeight)),
      }));
      expect(decodeTransaction(tx).map(receiptToJson), name).to.deep.equal(
        decodeCase(name, 'jsonParsed').map(receiptToJson),
      );
    }
  });

  it('token balances agree with the receipts: per token account, credits − debits = post − pre', () => {
    for (const name of caseNames()) {
      const tx = fixture(name, 'json');
      const meta = tx.meta as { err: unknown; preTokenBalances: Bal[]; postTokenBalances: Bal[] };
      if (meta.err !== null || name === 'inner-cpi-sparse' || name === 'noise-create-mint-burn') continue; // closes/mints/burns move balances too
      const keys = [
        ...(tx.transaction as { message: { accountKeys: string[] } }).message.accountKeys,
        ...((tx.meta as { loadedAddresses?: { writable: string[]; readonly: string[] } }).loadedAddresses?.writable ??
          []),
        ...((tx.meta as { loadedAddresses?: { writable: string[]; readonly: string[] } }).loadedAddresses?.readonly ??
          []),
      ];
      const net = new Map<string, bigint>();
      for (const r of decodeTransaction(tx)) {
        if (r.program === 'system') continue;
        net.set(r.destination, (net.get(r.destination) ?? 0n) + r.amount); // a withheld fee is not in the spendable amount
        net.set(r.source, (net.get(r.source) ?? 0n) - r.amount - (r.fee ?? 0n));
      }
      const amount = (list: Bal[], i: number): bigint =>
        BigInt(list.find((b) => b.accountIndex === i)?.uiTokenAmount.amount ?? '0');
      for (const [address, change] of net) {
        const i = keys.indexOf(address);
        expect(amount(meta.postTokenBalances, i) - amount(meta.preTokenBalances, i), `${name} ${address}`).to.equal(
          change,
        );
      }
    }
  });
});

interface RawIx {
  programIdIndex: number;
  accounts: number[];
  data: string;
  stackHeight?: number | null;
}

interface Bal {
  accountIndex: number;
  uiTokenAmount: { amount: string };
}
