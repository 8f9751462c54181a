// The two runtimes every probe runs in: LiteSVM (Agave 3.x) and solana-bankrun (Solana 1.18).
import { startBankrun } from './bankrun-run';
import { createLiteSvm, type Deployed, type RunResult } from './litesvm-run';

export interface Harness {
  invoke(programId: string, data: Uint8Array): Promise<RunResult>;
  deployUpgradeable(elf: Buffer): Promise<Deployed>;
  /** Deploys each ELF (a failure stops only its own deploy); all are executable once the call returns. */
  deployAll(elfs: Buffer[]): Promise<Deployed[]>;
}

export interface Runtime {
  name: string;
  /** `programs` maps a program id to a `.so` path, loaded at start. */
  start(programs?: Record<string, string>): Promise<Harness>;
}

export const RUNTIMES: Runtime[] = [
  { name: 'LiteSVM 1.5', start: (programs) => createLiteSvm(programs) },
  { name: 'solana-bankrun 0.4', start: (programs) => startBankrun(programs) },
];

/** Little-endian reader over return data. */
export function reader(buf: Buffer) {
  let at = 0;
  return {
    u8: () => buf.readUInt8(at++),
    u64: () => {
      const v = buf.readBigUInt64LE(at);
      at += 8;
      return v;
    },
    u128: () => {
      const lo = buf.readBigUInt64LE(at);
      const hi = buf.readBigUInt64LE(at + 8);
      at += 16;
      return (hi << 64n) | lo;
    },
    rest: () => buf.length - at,
  };
}

export function le64(...values: bigint[]): Buffer {
  const b = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => b.writeBigUInt64LE(BigInt.asUintN(64, v), i * 8));
  return b;
}

export function le128(v: bigint): Buffer {
  const x = BigInt.asUintN(128, v);
  return le64(x & ((1n << 64n) - 1n), x >> 64n);
}
