// The chain's sealed blocks and what points into them: block by slot, signature → (block, index, landing order),
// address → signatures, blockhash → height, the finalized block and the SlotHashes sysvar's recent entries.
// In memory and without I/O: the chain (chain.ts) feeds it blocks as it seals or restores them.
import { allAccountKeys, decodeWireTransaction } from './wire';
import type { BlockRecord, TxRecord } from './types';

/** Blocks a blockhash stays usable for (Agave MAX_PROCESSING_AGE); lastValidBlockHeight = height + this. */
export const MAX_BLOCKHASH_AGE = 150;
/** Entries in the SlotHashes sysvar (Agave MAX_ENTRIES); address lookup table creation checks recent slots in it. */
export const SLOT_HASHES_MAX = 512;

export interface Located {
  block: BlockRecord;
  index: number;
  /** Landing order over the whole chain. */
  seq: number;
}

export interface BlockIndex {
  /** Index a sealed block; `knownKeys` gives a transaction's account keys when execution already has them. */
  add(block: BlockRecord, knownKeys?: (t: TxRecord) => string[] | undefined): void;
  /** Index blocks read back from the ledger, oldest first. */
  restore(blocks: BlockRecord[]): void;
  get(slot: number): BlockRecord | undefined;
  tip(): BlockRecord;
  finalized(): BlockRecord;
  /** Move the finalized block to the newest one at least `finalityDepth` slots under the tip; the newly final blocks. */
  advanceFinality(finalityDepth: number): BlockRecord[];
  /** Slots in [start, end] that have a block, ascending. */
  slotsIn(start: number, end: number): number[];
  blockCount(): number;
  isBlockhashValid(blockhash: string): boolean;
  /**
   * Valid and known to the bank at block `at` (a node's preflight and simulation run at a commitment's bank: a
   * blockhash newer than that block is "Blockhash not found" there).
   */
  isBlockhashValidAt(blockhash: string, at: BlockRecord): boolean;
  lastValidBlockHeight(blockhash: string): number | null;
  locate(signature: string): Located | undefined;
  transactionCount(): number;
  /** Newest first, `before` / `until` exclusive, as getSignaturesForAddress pages. */
  signaturesForAddress(
    address: string,
    opts: { before?: string; until?: string; limit: number },
  ): Array<{ record: TxRecord; block: BlockRecord }>;
  /** The SlotHashes sysvar's entries, newest first (the same array, updated in place). */
  slotHashes(): Array<{ slot: bigint; hash: string }>;
}

/** A transaction's account keys, decoded from its wire bytes (for records read back from the ledger). */
export function keysOfRecord(t: TxRecord): string[] {
  return allAccountKeys(decodeWireTransaction(Buffer.from(t.wire, 'base64')), t.meta.loadedAddresses);
}

export function createBlockIndex(): BlockIndex {
  const blocks = new Map<number, BlockRecord>();
  const slots: number[] = []; // ascending slots that have a block
  const sigIndex = new Map<string, Located>();
  const addrIndex = new Map<string, string[]>(); // address → signatures, in landing order
  const blockhashHeights = new Map<string, number>();
  const recentHashes: Array<{ slot: bigint; hash: string }> = [];
  let seq = 0;
  let finIdx = 0; // index into `slots` of the finalized block

  const indexBlock = (b: BlockRecord, knownKeys?: (t: TxRecord) => string[] | undefined): void => {
    blocks.set(b.slot, b);
    slots.push(b.slot);
    blockhashHeights.set(b.blockhash, b.blockHeight);
    b.txs.forEach((t, index) => {
      sigIndex.set(t.signature, { block: b, index, seq: seq++ });
      // Keys are known from execution; only records read back from the ledger are decoded again.
      const keys = knownKeys?.(t) ?? keysOfRecord(t);
      for (const k of new Set(keys)) {
        let list = addrIndex.get(k);
        if (!list) addrIndex.set(k, (list = []));
        list.push(t.signature);
      }
    });
  };
  const pushSlotHash = (b: BlockRecord): void => {
    recentHashes.unshift({ slot: BigInt(b.slot), hash: b.blockhash });
    if (recentHashes.length > SLOT_HASHES_MAX) recentHashes.length = SLOT_HASHES_MAX;
  };
  const tip = (): BlockRecord => blocks.get(slots[slots.length - 1])!;
  const finalized = (): BlockRecord => blocks.get(slots[finIdx])!;

  return {
    add(block, knownKeys) {
      indexBlock(block, knownKeys);
      pushSlotHash(block);
    },
    restore(list) {
      for (const b of list) indexBlock(b);
      for (const b of list.slice(-SLOT_HASHES_MAX)) pushSlotHash(b);
    },
    get: (slot) => blocks.get(slot),
    tip,
    finalized,
    advanceFinality(finalityDepth) {
      const target = tip().slot - finalityDepth;
      const newly: BlockRecord[] = [];
      while (finIdx + 1 < slots.length && slots[finIdx + 1] <= target) {
        finIdx++;
        newly.push(blocks.get(slots[finIdx])!);
      }
      return newly;
    },
    slotsIn(start, end) {
      // `slots` is ascending: binary search the first slot ≥ start.
      let lo = 0;
      let hi = slots.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (slots[mid] < start) lo = mid + 1;
        else hi = mid;
      }
      const out: number[] = [];
      for (let i = lo; i < slots.length && slots[i] <= end; i++) out.push(slots[i]);
      return out;
    },
    blockCount: () => slots.length,
    isBlockhashValid(bh) {
      const h = blockhashHeights.get(bh);
      return h !== undefined && tip().blockHeight + 1 <= h + MAX_BLOCKHASH_AGE;
    },
    isBlockhashValidAt(bh, at) {
      const h = blockhashHeights.get(bh);
      return h !== undefined && h <= at.blockHeight && tip().blockHeight + 1 <= h + MAX_BLOCKHASH_AGE;
    },
    lastValidBlockHeight(bh) {
      const h = blockhashHeights.get(bh);
      return h === undefined ? null : h + MAX_BLOCKHASH_AGE;
    },
    locate: (signature) => sigIndex.get(signature),
    transactionCount: () => sigIndex.size,
    signaturesForAddress(address, o) {
      const list = addrIndex.get(address) ?? [];
      const beforeSeq = o.before !== undefined ? (sigIndex.get(o.before)?.seq ?? -1) : Infinity;
      const untilSeq = o.until !== undefined ? (sigIndex.get(o.until)?.seq ?? -1) : -1;
      const out: Array<{ record: TxRecord; block: BlockRecord }> = [];
      for (let i = list.length - 1; i >= 0 && out.length < o.limit; i--) {
        const loc = sigIndex.get(list[i])!;
        if (loc.seq >= beforeSeq) continue;
        if (loc.seq <= untilSeq) break;
        out.push({ record: loc.block.txs[loc.index], block: loc.block });
      }
      return out;
    },
    slotHashes: () => recentHashes,
  };
}
