// Pure: what a message will pay, as getFeeForMessage answers it: 5000 lamports per signature plus the priority fee
// ceil(compute-unit price (micro-lamports) × compute-unit limit / 10^6).
import { VersionedMessage } from '@solana/web3.js';
import { OncepayError } from '../common/errors';
import { LOCALNET_CODES } from '../common/errors/codes';
import { COMPUTE_BUDGET_PROGRAM_ID } from './program-ids';

export const LAMPORTS_PER_SIGNATURE = 5000n;
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000n;
// Without SetComputeUnitLimit the runtime grants this much per instruction that is not a compute-budget one.
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;

export function messageFee(messageBytes: Uint8Array): { recentBlockhash: string; fee: bigint } {
  let m: VersionedMessage;
  try {
    m = VersionedMessage.deserialize(messageBytes);
  } catch (e) {
    throw new OncepayError(LOCALNET_CODES.MALFORMED_TRANSACTION, `invalid message: ${(e as Error).message}`);
  }
  const keys = m.staticAccountKeys.map((k) => k.toBase58());
  let limit: bigint | null = null;
  let price = 0n;
  let others = 0n;
  for (const ix of m.compiledInstructions) {
    const d = Buffer.from(ix.data);
    if (keys[ix.programIdIndex] !== COMPUTE_BUDGET_PROGRAM_ID) {
      others += 1n;
    } else if (d[0] === 2 && d.length >= 5) {
      limit = BigInt(d.readUInt32LE(1));
    } else if (d[0] === 3 && d.length >= 9) {
      price = d.readBigUInt64LE(1);
    }
  }
  const units = limit ?? others * DEFAULT_UNITS_PER_INSTRUCTION;
  const capped = units > MAX_COMPUTE_UNIT_LIMIT ? MAX_COMPUTE_UNIT_LIMIT : units;
  const priority = (price * capped + 999_999n) / 1_000_000n;
  return {
    recentBlockhash: m.recentBlockhash,
    fee: LAMPORTS_PER_SIGNATURE * BigInt(m.header.numRequiredSignatures) + priority,
  };
}
