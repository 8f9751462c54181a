// Byte layouts of the transfer instructions, checked against instructions built by @solana/spl-token and
// @solana/web3.js (independent encoders), and receiptToJson's exact line.
import { PublicKey, SystemProgram } from '@solana/web3.js';
import {
  createApproveInstruction,
  createBurnInstruction,
  createMintToInstruction,
  createTransferCheckedInstruction,
  createTransferCheckedWithFeeInstruction,
  createTransferInstruction,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { expect } from 'chai';
import { receiptToJson, TOP_LEVEL, type Receipt } from '../../../indexer/decode';
import { decodeRawTransfer } from '../../../indexer/decode/raw-instruction';
import type { BaseUnits } from '../../../common/amount';

const k = (n: number): PublicKey => new PublicKey(Buffer.alloc(32, n));
const MAX = (1n << 64n) - 1n;

function raw(ix: { programId: PublicKey; keys: Array<{ pubkey: PublicKey }>; data: Buffer }) {
  return decodeRawTransfer(
    ix.programId.toBase58(),
    ix.keys.map((x) => x.pubkey.toBase58()),
    ix.data,
  );
}

describe('decode: instruction layouts', () => {
  it('SPL Token transfer (3) and transferChecked (12), at u64::MAX, with multisig signers after the fixed accounts', () => {
    const t = raw(createTransferInstruction(k(1), k(2), k(3), MAX, [k(4), k(5)], TOKEN_PROGRAM_ID));
    expect(t).to.deep.include({
      kind: 'transfer',
      source: k(1).toBase58(),
      destination: k(2).toBase58(),
      authority: k(3).toBase58(),
      amount: MAX,
      mint: null,
    });
    expect(t!.extras).to.deep.equal([k(4).toBase58(), k(5).toBase58()]);
    const c = raw(createTransferCheckedInstruction(k(1), k(9), k(2), k(3), 2n ** 53n + 1n, 6, [], TOKEN_PROGRAM_ID));
    expect(c).to.deep.include({
      kind: 'transferChecked',
      source: k(1).toBase58(),
      mint: k(9).toBase58(),
      destination: k(2).toBase58(),
      amount: 9_007_199_254_740_993n,
      decimals: 6,
    });
  });

  it('Token-2022 transferCheckedWithFee (26/1): amount, decimals and fee', () => {
    const f = raw(
      createTransferCheckedWithFeeInstruction(k(1), k(9), k(2), k(3), MAX, 9, 123_456n, [], TOKEN_2022_PROGRAM_ID),
    );
    expect(f).to.deep.include({
      program: 'spl-token-2022',
      kind: 'transferCheckedWithFee',
      amount: MAX,
      fee: 123_456n,
      decimals: 9,
      destination: k(2).toBase58(),
    });
  });

  it('tag 26 under the legacy Token program is not a transfer', () => {
    const ix = createTransferCheckedWithFeeInstruction(k(1), k(9), k(2), k(3), 5n, 9, 1n, [], TOKEN_2022_PROGRAM_ID);
    expect(
      decodeRawTransfer(
        TOKEN_PROGRAM_ID.toBase58(),
        ix.keys.map((x) => x.pubkey.toBase58()),
        ix.data,
      ),
    ).to.equal(null);
  });

  it('System transfer (2) and transferWithSeed (11)', () => {
    const s = raw(SystemProgram.transfer({ fromPubkey: k(1), toPubkey: k(2), lamports: MAX }));
    expect(s).to.deep.include({
      program: 'system',
      kind: 'systemTransfer',
      source: k(1).toBase58(),
      destination: k(2).toBase58(),
      amount: MAX,
      mint: 'SOL',
    });
    const w = raw(
      SystemProgram.transfer({
        fromPubkey: k(1),
        basePubkey: k(7),
        toPubkey: k(2),
        lamports: 42,
        seed: 'a-seed',
        programId: k(8),
      }),
    );
    expect(w).to.deep.include({
      kind: 'systemTransfer',
      source: k(1).toBase58(),
      destination: k(2).toBase58(),
      authority: k(7).toBase58(),
      amount: 42n,
    });
  });

  it('mintTo, burn, approve, createAccount are not transfers', () => {
    expect(raw(createMintToInstruction(k(1), k(2), k(3), 5n, [], TOKEN_PROGRAM_ID))).to.equal(null);
    expect(raw(createBurnInstruction(k(1), k(2), k(3), 5n, [], TOKEN_PROGRAM_ID))).to.equal(null);
    expect(raw(createApproveInstruction(k(1), k(2), k(3), 5n, [], TOKEN_2022_PROGRAM_ID))).to.equal(null);
    expect(
      raw(
        SystemProgram.createAccount({
          fromPubkey: k(1),
          newAccountPubkey: k(2),
          lamports: 5,
          space: 0,
          programId: k(3),
        }),
      ),
    ).to.equal(null);
  });

  it('receiptToJson prints exactly the CLI contract line, amount as a decimal string', () => {
    const r: Receipt = {
      signature: 'sig',
      slot: 5n,
      blockTime: 7,
      ixIndex: 2,
      innerIndex: TOP_LEVEL,
      program: 'spl-token',
      kind: 'transferChecked',
      mint: 'M',
      source: 'S',
      destination: 'D',
      destinationOwner: null,
      amount: MAX as BaseUnits,
      references: ['R'],
      accountKeys: ['S', 'D'],
    };
    expect(receiptToJson(r)).to.equal(
      '{"signature":"sig","ixIndex":2,"innerIndex":-1,"program":"spl-token","kind":"transferChecked","mint":"M","source":"S","destination":"D","destinationOwner":null,"amount":"18446744073709551615"}',
    );
  });
});
