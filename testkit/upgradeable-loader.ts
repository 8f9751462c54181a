// Instructions of the BPF upgradeable loader (loader v3), built by hand so the
// same deploy runs in LiteSVM (kit) and solana-bankrun (web3.js v1). Deploying
// through it runs the loader's deploy-time ELF verification.
import { PublicKey } from '@solana/web3.js';

export const LOADER_V3 = 'BPFLoaderUpgradeab1e11111111111111111111111';
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const SYSVAR_RENT = 'SysvarRent111111111111111111111111111111111';
const SYSVAR_CLOCK = 'SysvarC1ock11111111111111111111111111111111';

/** Sizes from solana-loader-v3-interface's UpgradeableLoaderState. */
export const BUFFER_METADATA_LEN = 37;
export const PROGRAM_ACCOUNT_LEN = 36;
/** Bytes of ELF per Write instruction: keeps each transaction under 1232 bytes. */
export const WRITE_CHUNK = 900;

export interface PlainKey {
  pubkey: string;
  isSigner: boolean;
  isWritable: boolean;
}
export interface PlainIx {
  programId: string;
  keys: PlainKey[];
  data: Buffer;
}

const key = (pubkey: string, isSigner: boolean, isWritable: boolean): PlainKey => ({ pubkey, isSigner, isWritable });

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
}
function u64(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
}

export function createAccountIx(from: string, to: string, lamports: bigint, space: bigint, owner: string): PlainIx {
  return {
    programId: SYSTEM_PROGRAM,
    keys: [key(from, true, true), key(to, true, true)],
    data: Buffer.concat([u32(0), u64(lamports), u64(space), new PublicKey(owner).toBuffer()]),
  };
}

export function initializeBufferIx(buffer: string, authority: string): PlainIx {
  return { programId: LOADER_V3, keys: [key(buffer, false, true), key(authority, false, false)], data: u32(0) };
}

export function writeIx(buffer: string, authority: string, offset: number, bytes: Buffer): PlainIx {
  return {
    programId: LOADER_V3,
    keys: [key(buffer, false, true), key(authority, true, false)],
    data: Buffer.concat([u32(1), u32(offset), u64(BigInt(bytes.length)), bytes]),
  };
}

export function programDataAddress(program: string): string {
  return PublicKey.findProgramAddressSync([new PublicKey(program).toBuffer()], new PublicKey(LOADER_V3))[0].toBase58();
}

export function deployWithMaxDataLenIx(
  payer: string,
  program: string,
  buffer: string,
  authority: string,
  maxDataLen: bigint,
): PlainIx {
  return {
    programId: LOADER_V3,
    keys: [
      key(payer, true, true),
      key(programDataAddress(program), false, true),
      key(program, false, true),
      key(buffer, false, true),
      key(SYSVAR_RENT, false, false),
      key(SYSVAR_CLOCK, false, false),
      key(SYSTEM_PROGRAM, false, false),
      key(authority, true, false),
    ],
    data: Buffer.concat([u32(2), u64(maxDataLen)]),
  };
}

/**
 * The transactions (each a list of instructions) that deploy `elf` as
 * `program` from a fresh `buffer`, the payer being the upgrade authority.
 * `rent(space)` gives the rent-exempt minimum.
 */
export function deployTransactions(opts: {
  payer: string;
  buffer: string;
  program: string;
  elf: Buffer;
  rent: (space: bigint) => bigint;
}): PlainIx[][] {
  const { payer, buffer, program, elf, rent } = opts;
  const bufferLen = BigInt(BUFFER_METADATA_LEN + elf.length);
  const txs: PlainIx[][] = [
    [createAccountIx(payer, buffer, rent(bufferLen), bufferLen, LOADER_V3), initializeBufferIx(buffer, payer)],
  ];
  for (let at = 0; at < elf.length; at += WRITE_CHUNK) {
    txs.push([writeIx(buffer, payer, at, elf.subarray(at, at + WRITE_CHUNK))]);
  }
  const programLen = BigInt(PROGRAM_ACCOUNT_LEN);
  txs.push([
    createAccountIx(payer, program, rent(programLen), programLen, LOADER_V3),
    deployWithMaxDataLenIx(payer, program, buffer, payer, BigInt(elf.length * 2)),
  ]);
  return txs;
}
