// What one instruction says about a transfer, before the transaction context (mint from balances, owner,
// signer flags) is applied. Produced from raw bytes (json encoding) or the RPC's parsed form (jsonParsed).
import type { ReceiptKind, ReceiptProgram } from './receipt';

export interface InstructionTransfer {
  program: ReceiptProgram;
  kind: ReceiptKind;
  source: string;
  destination: string;
  /** From the instruction (checked variants, or 'SOL'); null for a plain token `transfer`. */
  mint: string | null;
  authority: string;
  /** Gross amount the instruction names. */
  amount: bigint;
  /** Fee stated by transferCheckedWithFee (withheld in the destination), else null. */
  fee: bigint | null;
  decimals: number | null;
  /**
   * Accounts the instruction carried beyond its fixed ones (multisig signers, Solana Pay references, transfer-hook
   * accounts), in order; null when the encoding hides them (jsonParsed System transfers).
   */
  extras: string[] | null;
}
