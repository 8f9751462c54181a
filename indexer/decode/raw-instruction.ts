// Transfers from raw instruction bytes (the `json` encoding, or a jsonParsed instruction the RPC could not parse).
// Layouts, all little-endian:
//   SPL Token / Token-2022  3 Transfer                [3, amount u64]                  accounts: source, destination, authority, signers…
//                          12 TransferChecked         [12, amount u64, decimals u8]     accounts: source, mint, destination, authority, signers…
//   Token-2022             26 TransferFeeExtension, 1 TransferCheckedWithFee
//                                                     [26, 1, amount u64, decimals u8, fee u64]  accounts: as TransferChecked
//   System                  2 Transfer                [2 u32, lamports u64]             accounts: from, to
//                          11 TransferWithSeed        [11 u32, lamports u64, seed, owner] accounts: from, base, to
// Trailing bytes are tolerated, as the programs themselves tolerate them; a short buffer is malformed (the program
// would have failed, yet the transaction succeeded).
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';
import { NATIVE_MINT_LABEL, SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, receiptProgramOf } from './programs';
import type { InstructionTransfer } from './transfer';

function u64(data: Uint8Array, at: number): bigint {
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(data[at + i]);
  return v;
}

function u32(data: Uint8Array, at: number): number {
  return (data[at] | (data[at + 1] << 8) | (data[at + 2] << 16) | (data[at + 3] << 24)) >>> 0;
}

function need(cond: boolean, what: string): void {
  if (!cond) throw new OncepayError(DECODE_CODES.MALFORMED_INSTRUCTION, what);
}

/** null when the instruction is not a transfer we record (initialize, approve, mintTo, burn, other programs…). */
export function decodeRawTransfer(programId: string, accounts: string[], data: Uint8Array): InstructionTransfer | null {
  const program = receiptProgramOf(programId);
  if (program === null || data.length === 0) return null;
  if (programId === SYSTEM_PROGRAM) {
    if (data.length < 4) return null;
    const tag = u32(data, 0);
    if (tag === 2) {
      // 2 - Transfer
      need(data.length >= 12, `system transfer data is ${data.length} bytes, expected 12`);
      need(accounts.length >= 2, `system transfer has ${accounts.length} accounts, expected 2`);
      const [from, to, ...extras] = accounts;
      return sol(from, to, from, u64(data, 4), extras);
    }
    if (tag === 11) {
      // 11 - TransferWithSeed
      need(data.length >= 12, `system transferWithSeed data is ${data.length} bytes, expected ≥ 12`);
      need(accounts.length >= 3, `system transferWithSeed has ${accounts.length} accounts, expected 3`);
      const [from, base, to, ...extras] = accounts;
      return sol(from, to, base, u64(data, 4), extras);
    }
    return null;
  }
  const tag = data[0];
  if (tag === 3) {
    // 3 - Transfer
    need(data.length >= 9, `token transfer data is ${data.length} bytes, expected 9`);
    need(accounts.length >= 3, `token transfer has ${accounts.length} accounts, expected ≥ 3`);
    const [source, destination, authority, ...extras] = accounts;
    return {
      program,
      kind: 'transfer',
      source,
      destination,
      mint: null,
      authority,
      amount: u64(data, 1),
      fee: null,
      decimals: null,
      extras,
    };
  }
  if (tag === 12) {
    // 12 - TransferChecked
    need(data.length >= 10, `token transferChecked data is ${data.length} bytes, expected 10`);
    need(accounts.length >= 4, `token transferChecked has ${accounts.length} accounts, expected ≥ 4`);
    const [source, mint, destination, authority, ...extras] = accounts;
    return {
      program,
      kind: 'transferChecked',
      source,
      destination,
      mint,
      authority,
      amount: u64(data, 1),
      fee: null,
      decimals: data[9],
      extras,
    };
  }
  if (tag === 26 && programId === TOKEN_2022_PROGRAM && data[1] === 1) {
    // 26 - TransferFeeExtension, 1 - TransferCheckedWithFee
    need(data.length >= 19, `token-2022 transferCheckedWithFee data is ${data.length} bytes, expected 19`);
    need(accounts.length >= 4, `token-2022 transferCheckedWithFee has ${accounts.length} accounts, expected ≥ 4`);
    const [source, mint, destination, authority, ...extras] = accounts;
    const amount = u64(data, 2);
    const fee = u64(data, 11);
    return {
      program,
      kind: 'transferCheckedWithFee',
      source,
      destination,
      mint,
      authority,
      amount,
      fee,
      decimals: data[10],
      extras,
    };
  }
  return null;
}

function sol(
  source: string,
  destination: string,
  authority: string,
  lamports: bigint,
  extras: string[],
): InstructionTransfer {
  return {
    program: 'system',
    kind: 'systemTransfer',
    source,
    destination,
    mint: NATIVE_MINT_LABEL,
    authority,
    amount: lamports,
    fee: null,
    decimals: 9,
    extras,
  };
}
