import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { BN, BorshCoder, Idl } from '@coral-xyz/anchor';
import { Keypair, PublicKey } from '@solana/web3.js';
import { decideAttempt, compareTerms } from '../../../app/payout/decide';
import {
  OP_ACCOUNT_DISCRIMINATOR,
  OP_ACCOUNT_LEN,
  decodeOpAccount,
  encodeExecutePayoutData,
  executePayoutInstruction,
} from '../../../app/payout/program';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import {
  PROGRAM_ERRORS,
  customErrorCode,
  describeTransactionError,
  programErrorName,
} from '../../../app/program/errors';
import { initializeMerchantInstruction } from '../../../app/merchant/instructions';
import { opId } from '../../../app/op-id';
import { canonicalRequestHash } from '../../../app/api/idempotency';
import { parseAmount } from '../../../app/payout/create-payout';
import idlJson from '../../../idl/oncepay.json';

const idl = idlJson as Idl & { errors: Array<{ code: number; name: string }> };
const coder = new BorshCoder(idl);
const OP = opId('ab'.repeat(32));

describe('app/payout pure parts', () => {
  describe('program interface agrees with idl/oncepay.json', () => {
    it('encodes execute_payout exactly as anchor does from the IDL', () => {
      const amount = 18446744073709551615n;
      const ours = encodeExecutePayoutData({ opId: OP, amount, opBump: 254 });
      const theirs = coder.instruction.encode('execute_payout', {
        op_id: [...Buffer.from(OP, 'hex')],
        amount: new BN(amount.toString()),
        op_bump: 254,
      });
      expect(ours.toString('hex')).to.equal(Buffer.from(theirs).toString('hex'));
      // And as the program reads it (Anchor's convention, not the IDL's word for it): sha256("global:execute_payout")
      // [..8] ‖ op_id[32] ‖ amount u64 LE ‖ op_bump u8.
      const disc = createHash('sha256').update('global:execute_payout').digest().subarray(0, 8);
      expect(ours.toString('hex')).to.equal(disc.toString('hex') + OP + 'ffffffffffffffff' + 'fe');
      expect(idl.address).to.equal(ONCEPAY_PROGRAM_ID);
    });

    it('lists the accounts in the IDL order with the IDL signer/writable flags', () => {
      const k = () => Keypair.generate().publicKey;
      const ix = executePayoutInstruction(
        new PublicKey(ONCEPAY_PROGRAM_ID),
        {
          payoutAuthority: k(),
          payer: k(),
          merchant: k(),
          operation: k(),
          vault: k(),
          mint: k(),
          recipientToken: k(),
          tokenProgram: k(),
        },
        { opId: OP, amount: 1n, opBump: 1 },
      );
      const spec = idl.instructions.find((i) => i.name === 'execute_payout')!.accounts as Array<{
        name: string;
        signer?: boolean;
        writable?: boolean;
        address?: string;
      }>;
      expect(ix.keys.map((a) => [a.isSigner, a.isWritable])).to.deep.equal(spec.map((a) => [!!a.signer, !!a.writable]));
      expect(ix.keys[8].pubkey.toBase58()).to.equal(spec[8].address);
    });

    it('encodes initialize_merchant as anchor does from the IDL, accounts in the IDL order and flags', () => {
      const programId = new PublicKey(ONCEPAY_PROGRAM_ID);
      const authority = Keypair.generate().publicKey;
      const payoutAuthority = Keypair.generate().publicKey;
      const { ix, merchant } = initializeMerchantInstruction(programId, authority, payoutAuthority);
      const [pda, bump] = PublicKey.findProgramAddressSync([Buffer.from('merchant'), authority.toBuffer()], programId);
      expect(merchant.toBase58()).to.equal(pda.toBase58());
      const theirs = coder.instruction.encode('initialize_merchant', {
        payout_authority: payoutAuthority,
        merchant_bump: bump,
      });
      expect(ix.data.toString('hex')).to.equal(Buffer.from(theirs).toString('hex'));
      const spec = idl.instructions.find((i) => i.name === 'initialize_merchant')!.accounts as Array<{
        name: string;
        signer?: boolean;
        writable?: boolean;
        address?: string;
      }>;
      expect(ix.keys.map((a) => [a.isSigner, a.isWritable])).to.deep.equal(spec.map((a) => [!!a.signer, !!a.writable]));
      expect(ix.keys[3].pubkey.toBase58()).to.equal(spec[3].address);
    });

    it('decodes the Operation account layout and names OperationAlreadyConsumed = 6000 as the IDL does', () => {
      const acc = idl.accounts!.find((a) => a.name === 'Operation')!;
      expect([...OP_ACCOUNT_DISCRIMINATOR]).to.deep.equal(acc.discriminator);
      const k = () => Keypair.generate().publicKey;
      const fields = {
        op_id: [...Buffer.from(OP, 'hex')],
        merchant: k(),
        recipient: k(),
        mint: k(),
        amount: new BN('12345678901234567890'),
        slot: new BN('77'),
        bump: 253,
      };
      // Encode with anchor's coder (from the IDL), decode with ours.
      return coder.accounts.encode('Operation', fields as never).then((buf) => {
        expect(buf.length).to.equal(OP_ACCOUNT_LEN);
        const d = decodeOpAccount(buf);
        expect(d).to.deep.equal({
          opId: OP,
          merchant: fields.merchant.toBase58(),
          recipient: fields.recipient.toBase58(),
          mint: fields.mint.toBase58(),
          amount: 12345678901234567890n,
          slot: 77n,
          bump: 253,
        });
      });
    });

    it('refuses an account with another discriminator or too short', () => {
      expect(() => decodeOpAccount(Buffer.alloc(OP_ACCOUNT_LEN))).to.throw(/OP_ACCOUNT_MALFORMED/);
      expect(() => decodeOpAccount(Buffer.alloc(10))).to.throw(/OP_ACCOUNT_MALFORMED/);
    });

    it('OperationAlreadyConsumed is 6000 in the IDL', () => {
      expect(idl.errors.find((e) => e.name === 'OperationAlreadyConsumed')!.code).to.equal(
        PROGRAM_ERRORS.OperationAlreadyConsumed,
      );
    });
  });

  describe('decideAttempt', () => {
    const landedErr = (err: unknown) => ({
      status: { found: true as const, settled: true as const, slot: 9n, err: err as never },
      expired: undefined,
    });
    it('landed without error → landed', () => {
      expect(decideAttempt(landedErr(null))).to.deep.equal({ kind: 'landed', slot: 9n });
    });
    it('landed with custom 6000 → consumed (another attempt won)', () => {
      expect(decideAttempt(landedErr({ InstructionError: [0, { Custom: 6000 }] }))).to.deep.equal({
        kind: 'consumed',
        slot: 9n,
      });
    });
    it('landed with another error → failed with that error', () => {
      const s = decideAttempt(landedErr({ InstructionError: [0, { Custom: 6004 }] }));
      expect(s.kind).to.equal('failed');
    });
    it('seen but not settled → wait (never re-sign)', () => {
      expect(decideAttempt({ status: { found: true, settled: false, slot: 3n }, expired: true })).to.deep.equal({
        kind: 'wait',
      });
    });
    it('not found, blockhash valid or unknown → send the same bytes', () => {
      expect(decideAttempt({ status: { found: false }, expired: false })).to.deep.equal({ kind: 'send' });
      expect(decideAttempt({ status: { found: false }, expired: undefined })).to.deep.equal({ kind: 'send' });
    });
    it('not found, just sent by us → wait (no rebroadcast storm, no expiry call)', () => {
      expect(decideAttempt({ status: { found: false }, expired: undefined, sentRecently: true })).to.deep.equal({
        kind: 'wait',
      });
    });
    it('not found after expiry → check the op account (expiry alone proves nothing)', () => {
      expect(decideAttempt({ status: { found: false }, expired: true })).to.deep.equal({ kind: 'check_op' });
    });
    it('customErrorCode reads only InstructionError Custom', () => {
      expect(customErrorCode({ InstructionError: [1, { Custom: 6000 }] })).to.equal(6000);
      expect(customErrorCode('AccountInUse')).to.equal(undefined);
      expect(customErrorCode({ InstructionError: [0, 'InvalidArgument'] })).to.equal(undefined);
    });
    it("a program error is stored as the IDL's name and number, for every error of the IDL's table", () => {
      for (const e of idl.errors) {
        const err = { InstructionError: [0, { Custom: e.code }] };
        expect(describeTransactionError(err)).to.equal(`${e.name} (${e.code})`);
        expect(programErrorName(err)).to.equal(e.name);
      }
      expect(PROGRAM_ERRORS).to.deep.equal({
        OperationAlreadyConsumed: idl.errors.find((e) => e.name === 'OperationAlreadyConsumed')!.code,
        Unauthorized: idl.errors.find((e) => e.name === 'Unauthorized')!.code,
      });
      // Not the program's: kept as the chain gave it.
      expect(describeTransactionError({ InstructionError: [0, { Custom: 1 }] })).to.equal(
        '{"InstructionError":[0,{"Custom":1}]}',
      );
      expect(describeTransactionError('InsufficientFundsForFee')).to.equal('"InsufficientFundsForFee"');
    });
    it('Unauthorized (6001) is its own step: the signer is wrong, not the payout', () => {
      const status = {
        found: true,
        settled: true,
        slot: 4n,
        err: { InstructionError: [0, { Custom: 6001 }] },
      } as const;
      expect(decideAttempt({ status, expired: undefined })).to.deep.equal({
        kind: 'unauthorized',
        slot: 4n,
        error: 'Unauthorized (6001)',
      });
    });
  });

  describe('compareTerms', () => {
    const op = { opId: OP, merchant: 'M', recipient: 'R', mint: 'X', amount: 5n, slot: 1n, bump: 1 } as never;
    it('is empty when the op account records this row', () => {
      expect(compareTerms({ opId: OP, merchant: 'M', recipient: 'R', mint: 'X', amount: 5n }, op)).to.deep.equal([]);
    });
    it('names every differing field', () => {
      expect(
        compareTerms({ opId: OP, merchant: 'M', recipient: 'R2', mint: 'X', amount: 6n }, op).map((m) => m.field),
      ).to.deep.equal(['recipient', 'amount']);
    });
  });

  describe('canonical request hash and amounts', () => {
    it('ignores key order, not values', () => {
      const h1 = canonicalRequestHash('POST', '/v1/payouts', { a: '1', b: '2' });
      expect(canonicalRequestHash('post', '/v1/payouts', { b: '2', a: '1' })).to.equal(h1);
      expect(canonicalRequestHash('POST', '/v1/payouts', { a: '1', b: '3' })).to.not.equal(h1);
    });
    it('parseAmount: malformed vs out of range', () => {
      expect(parseAmount('18446744073709551615')).to.equal(18446744073709551615n);
      expect(() => parseAmount('18446744073709551616')).to.throw(/OUT_OF_RANGE/);
      expect(() => parseAmount('9'.repeat(30))).to.throw(/OUT_OF_RANGE/);
      expect(() => parseAmount('01')).to.throw(/MALFORMED/);
      expect(() => parseAmount('1.0')).to.throw(/MALFORMED/);
    });
  });
});
