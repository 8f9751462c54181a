// Every decoded transfer against the transaction's own pre/post token balances (indexer/decode/balance-check.ts),
// on real fixtures — LiteSVM-executed and mainnet/devnet — and on mutated copies of them. Pure: no I/O.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { expect } from 'chai';
import { isOncepayError, OncepayError } from '../../../common/errors';
import {
  DECODE_CODES,
  decodeBlock,
  decodeTransaction,
  readTransactionsInput,
  type Receipt,
} from '../../../indexer/decode';
import { allFixtureInputs, clone, fixture, REAL } from './helpers';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixture JSON edited field by field; a wrong path throws or fails the assertion that follows
type Tx = Record<string, any>;

function refusal(f: () => unknown): OncepayError {
  try {
    f();
  } catch (e) {
    if (isOncepayError(e)) return e;
    throw e;
  }
  throw new Error('expected a refusal, got receipts');
}

/** Set the base-unit amount of an account's token balance entry (pre or post). */
function setBalance(
  tx: Tx,
  field: 'preTokenBalances' | 'postTokenBalances',
  accountIndex: number,
  amount: bigint,
): void {
  const b = (tx.meta[field] as Tx[]).find((x) => x.accountIndex === accountIndex);
  if (!b) throw new Error(`no ${field} entry for account ${accountIndex}`);
  b.uiTokenAmount = {
    ...b.uiTokenAmount,
    amount: amount.toString(),
    uiAmount: null,
    uiAmountString: amount.toString(),
  };
}

function balance(tx: Tx, field: 'preTokenBalances' | 'postTokenBalances', accountIndex: number): bigint {
  return BigInt((tx.meta[field] as Tx[]).find((x) => x.accountIndex === accountIndex)!.uiTokenAmount.amount);
}

function u64le(v: bigint): number[] {
  return Array.from({ length: 8 }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));
}

/** A SPL Token `transfer` (tag 3) instruction's data for `amount`, base58 as in the json encoding. */
const transferData = (amount: bigint) => bs58.encode(Uint8Array.from([3, ...u64le(amount)]));

describe("decode: transfers cross-checked against the transaction's own token balances", () => {
  it('every real fixture (LiteSVM, mainnet, devnet; swaps with burns, mintTo, wSOL) agrees with its balances', () => {
    let tokenReceipts = 0;
    for (const [label, tx] of allFixtureInputs()) {
      let rs: Receipt[] = [];
      try {
        rs = decodeTransaction(tx);
      } catch (e) {
        // the abbreviated docs example is refused for other reasons; nothing here may be a balance refusal
        expect(isOncepayError(e, DECODE_CODES.BALANCE_MISMATCH), `${label}: ${(e as Error).message}`).to.equal(false);
      }
      tokenReceipts += rs.filter((r) => r.program !== 'system').length;
    }
    expect(tokenReceipts).to.be.greaterThan(20);
  });

  it('the attack: balances grew by 1 while the instruction says 1,000,000 → BALANCE_MISMATCH (json encoding)', () => {
    const tx = clone(fixture('spl-transfer-reference', 'json')) as Tx;
    // instruction 1 is `transfer` [source 3, destination 2, authority 1, reference 4]
    tx.transaction.message.instructions[1].data = transferData(1_000_000n);
    setBalance(tx, 'postTokenBalances', 2, balance(tx, 'preTokenBalances', 2) + 1n);
    setBalance(tx, 'postTokenBalances', 3, balance(tx, 'preTokenBalances', 3) - 1n);
    const e = refusal(() => decodeTransaction(tx));
    expect(e.code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
    expect(e.context).to.deep.include({ decoded: '-1000000', actual: '-1' }); // the source is checked first
    // The same instruction with balances that really moved 1,000,000 is a receipt of 1,000,000.
    setBalance(tx, 'postTokenBalances', 2, balance(tx, 'preTokenBalances', 2) + 1_000_000n);
    setBalance(tx, 'postTokenBalances', 3, balance(tx, 'preTokenBalances', 3) - 1_000_000n);
    expect(decodeTransaction(tx).map((r) => r.amount)).to.deep.equal([1_000_000n]);
  });

  it('the attack in the jsonParsed encoding: parsed amount 1,000,000, balances +1 → BALANCE_MISMATCH', () => {
    const tx = clone(fixture('spl-transfer-reference', 'jsonParsed')) as Tx;
    tx.transaction.message.instructions[1].parsed.info.amount = '1000000';
    setBalance(tx, 'postTokenBalances', 2, balance(tx, 'preTokenBalances', 2) + 1n);
    setBalance(tx, 'postTokenBalances', 3, balance(tx, 'preTokenBalances', 3) - 1n);
    expect(refusal(() => decodeTransaction(tx)).code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
  });

  it('a real mainnet transfer (BONK, base64) with its destination balance lowered → BALANCE_MISMATCH', () => {
    const tx = clone(
      readTransactionsInput(readFileSync(join(REAL, 'mainnet-66iwZv-bonk-transfer.base64.json'), 'utf8'))[0],
    ) as Tx;
    const [r] = decodeTransaction(tx);
    const dest = (tx.meta.postTokenBalances as Tx[]).find((b) => b.owner === r.destinationOwner)!;
    dest.uiTokenAmount.amount = (BigInt(dest.uiTokenAmount.amount) - 1n).toString();
    const e = refusal(() => decodeTransaction(tx));
    expect(e.code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
    expect(e.context.account).to.equal(r.destination);
  });

  it('transferCheckedWithFee: the destination grows by amount − fee; a balance that grew by the whole amount is refused', () => {
    const tx = clone(fixture('token2022-transfer-fee', 'json')) as Tx;
    const [r] = decodeTransaction(tx);
    expect(r.fee! > 0n).to.equal(true);
    const destIndex = (tx.transaction.message.accountKeys as string[]).indexOf(r.destination);
    setBalance(tx, 'postTokenBalances', destIndex, balance(tx, 'postTokenBalances', destIndex) + r.fee!);
    expect(refusal(() => decodeTransaction(tx)).code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
  });

  it('several transfers to one account in one transaction must sum up', () => {
    const tx = clone(fixture('spl-two-transfers', 'json')) as Tx;
    // Point the second transfer at the first one's destination.
    const [first, second] = decodeTransaction(tx);
    const keys = tx.transaction.message.accountKeys as string[];
    const d1 = keys.indexOf(first.destination);
    const d2 = keys.indexOf(second.destination);
    tx.transaction.message.instructions[1].accounts[1] = d1;
    // balances unchanged: account d1 grew by the first transfer only, d2 grew with no transfer into it
    expect(refusal(() => decodeTransaction(tx)).code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
    // balances that show both arriving at d1 (and nothing at d2) agree
    setBalance(tx, 'postTokenBalances', d1, balance(tx, 'preTokenBalances', d1) + first.amount + second.amount);
    setBalance(tx, 'postTokenBalances', d2, balance(tx, 'preTokenBalances', d2));
    expect(decodeTransaction(tx).map((r) => [r.destination, r.amount])).to.deep.equal([
      [first.destination, first.amount],
      [first.destination, second.amount],
    ]);
  });

  it('a fee mint paid twice into one account by plain transferChecked (fees unstated, not attributable) is refused, never credited gross', () => {
    const tx = clone(fixture('token2022-fee-mint-plain-checked', 'json')) as Tx;
    const [r] = decodeTransaction(tx); // one touch: the balance growth is what arrived (9.85 of 10.00)
    expect(r.fee! > 0n).to.equal(true);
    const ix = tx.transaction.message.instructions[0];
    tx.transaction.message.instructions.push(clone(ix));
    const [src, , dest] = ix.accounts as number[];
    setBalance(tx, 'postTokenBalances', dest, balance(tx, 'preTokenBalances', dest) + 2n * r.amount);
    setBalance(tx, 'postTokenBalances', src, balance(tx, 'preTokenBalances', src) - 2n * (r.amount + r.fee!));
    const e = refusal(() => decodeTransaction(tx));
    expect(e.code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
    expect(e.context).to.deep.include({
      account: r.destination,
      actual: (2n * r.amount).toString(),
      decoded: (2n * (r.amount + r.fee!)).toString(),
    });
  });

  it('a balance of another mint than the transfer names is refused', () => {
    const tx = clone(fixture('token2022-transfer-checked', 'json')) as Tx;
    const [r] = decodeTransaction(tx);
    const keys = tx.transaction.message.accountKeys as string[];
    const b = (tx.meta.postTokenBalances as Tx[]).find((x) => x.accountIndex === keys.indexOf(r.destination))!;
    b.mint = 'So11111111111111111111111111111111111111112';
    expect(refusal(() => decodeTransaction(tx)).code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
  });

  it('a transfer into an account that has no token balance at all is refused', () => {
    const tx = clone(fixture('spl-transfer-reference', 'json')) as Tx;
    tx.meta.preTokenBalances = (tx.meta.preTokenBalances as Tx[]).filter((b) => b.accountIndex !== 2);
    tx.meta.postTokenBalances = (tx.meta.postTokenBalances as Tx[]).filter((b) => b.accountIndex !== 2);
    expect(refusal(() => decodeTransaction(tx)).code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
  });

  describe('the scanner / backfill path (decodeBlock)', () => {
    const good = () => fixture('spl-two-transfers', 'json');
    const forged = () => {
      const tx = clone(fixture('spl-transfer-reference', 'json')) as Tx;
      tx.transaction.message.instructions[1].data = transferData(1_000_000_000n);
      return tx;
    };
    const block = () => ({
      blockhash: 'x',
      parentSlot: 9,
      transactions: [good(), forged(), good()].map((t) => ({
        transaction: (t as Tx).transaction,
        meta: (t as Tx).meta,
        version: (t as Tx).version,
      })),
    });

    it('without a handler, the refused transaction fails the block (as any refused transaction does)', () => {
      const e = refusal(() => decodeBlock(block(), { slot: 10 }));
      expect(e.code).to.equal(DECODE_CODES.BALANCE_MISMATCH);
      expect(e.context.transaction).to.equal(1);
    });

    it('with onBalanceMismatch, that transaction yields nothing and is reported; the others are decoded', () => {
      const refused: Array<[string, number]> = [];
      const rs = decodeBlock(block(), { slot: 10, onBalanceMismatch: (e, i) => refused.push([e.code, i]) });
      expect(refused).to.deep.equal([[DECODE_CODES.BALANCE_MISMATCH, 1]]);
      expect(rs).to.have.length(4); // two receipts from each copy of the good transaction
      expect(rs.every((r) => r.signature === (good() as Tx).transaction.signatures[0])).to.equal(true);
    });

    it('other refusals still fail the block even with the handler', () => {
      const b = block();
      (b.transactions[0].meta as Tx).err = undefined;
      delete (b.transactions[0].meta as Tx).status;
      expect(refusal(() => decodeBlock(b, { slot: 10, onBalanceMismatch: () => undefined })).code).to.equal(
        DECODE_CODES.MALFORMED_TRANSACTION,
      );
    });
  });
});
