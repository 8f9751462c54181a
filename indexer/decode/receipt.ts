// A receipt is one observed transfer. Its identity is (cluster, signature, ixIndex, innerIndex) and nothing
// else: two transfers in one transaction are two receipts, and a redelivered transaction is the same receipts.
import type { BaseUnits } from '../../common/amount';

/** innerIndex of a top-level instruction. Never NULL: NULLs are distinct inside a SQL UNIQUE. */
export const TOP_LEVEL = -1;

export type ReceiptProgram = 'spl-token' | 'spl-token-2022' | 'system';
export type ReceiptKind = 'transfer' | 'transferChecked' | 'transferCheckedWithFee' | 'systemTransfer';

export interface Receipt {
  signature: string;
  slot: bigint | null;
  blockTime: number | null;
  /** Index of the top-level instruction (the outer one for a CPI). */
  ixIndex: number;
  /** Position inside meta.innerInstructions[k].instructions where k.index === ixIndex; TOP_LEVEL (-1) if top-level. */
  innerIndex: number;
  program: ReceiptProgram;
  kind: ReceiptKind;
  /** Mint address; 'SOL' for native transfers. null only if a plain `transfer` has no token balance to name it. */
  mint: string | null;
  /** Source token account (or wallet for SOL). */
  source: string;
  /** Destination token account (or wallet for SOL). */
  destination: string;
  /** Owner of the destination token account (from token balances), or the wallet for SOL. */
  destinationOwner: string | null;
  /** What arrived, in base units (net of a Token-2022 transfer fee). */
  amount: BaseUnits;
  /** Account keys of the whole transaction (for Solana Pay reference matching). */
  accountKeys?: string[];
  /**
   * The keys the transfer instruction itself carried beyond its fixed accounts that are not signers of the
   * transaction (Solana Pay references). Absent when the encoding hides them (jsonParsed System transfers).
   */
  references?: string[];
  /** Cluster name, when the caller passed one to the decoder (part of the receipt's key in the ledger). */
  cluster?: string;
  /** Fee withheld in the destination, as stated by a Token-2022 transferCheckedWithFee (amount above is net of it). */
  fee?: BaseUnits;
  /** Mint decimals, when the instruction states them (checked variants; 9 for SOL). */
  decimals?: number;
}
