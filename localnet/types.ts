// Records the localnet keeps per sealed block, in memory and in blocks.jsonl.
import type { RpcMeta } from './encode';

export interface TxRecord {
  signature: string;
  slot: number;
  /** The wire transaction, base64. */
  wire: string;
  meta: RpcMeta;
}

export interface BlockRecord {
  slot: number;
  parentSlot: number;
  blockhash: string;
  previousBlockhash: string;
  blockHeight: number;
  blockTime: number;
  txs: TxRecord[];
}

export type Commitment = 'processed' | 'confirmed' | 'finalized';
