// The chain: LiteSVM executes, this module makes slots, blocks, commitment and blockhash expiry around it.
// Transactions execute at once into the pending slot; sealing the slot turns them into a block (status
// processed → confirmed), and `finalityDepth` slots later the block is finalized. One fork, no votes, no leaders.
// It composes four parts: genesis/restore (genesis.ts), execution (execution.ts), the block index and finality
// (block-index.ts) and account history for reads at a commitment (account-history.ts); what is left here is the
// pending slot, sealing, the slot timer and the events.
import { Keypair, SystemProgram, Transaction, ComputeBudgetProgram, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { LiteSVM } from 'litesvm';
import { isOncepayError } from '../common/errors';
import { failpoint } from '../common/failpoint';
import { logger } from '../common/log';
import { createAccountHistory } from './account-history';
import { MAX_BLOCKHASH_AGE, createBlockIndex } from './block-index';
import type { AccountSnapshot, RpcTxError } from './encode';
import { SimulateOptions, SimulationResult, createExecutor, nativeOf } from './execution';
import { messageFee } from './fee';
import { ProgramSpec, openGenesis, sha } from './genesis';
import type { LedgerStore } from './persist';
import type { TokenProgramChoice } from './token-program';
import { invalidParams } from './rpc-error';
import type { BlockRecord, Commitment, TxRecord } from './types';

export { MAX_BLOCKHASH_AGE } from './block-index';
export type { SimulationResult } from './execution';
export type { ProgramSpec } from './genesis';

/** Slots the status cache answers for without searchTransactionHistory (Agave MAX_CACHE_ENTRIES). */
const STATUS_CACHE_SLOTS = 300;
/** The deepest confirmation count a node reports (MAX_LOCKOUT_HISTORY + 1). */
const MAX_CONFIRMATIONS = 32;

export interface ChainOptions {
  slotMs: number;
  finalityDepth: number;
  programs?: ProgramSpec[];
  ledger?: LedgerStore | null;
  tokenProgram?: TokenProgramChoice;
}

export interface SignatureStatus {
  slot: number;
  confirmations: number | null;
  err: RpcTxError | null;
  status: { Ok: null } | { Err: RpcTxError };
  confirmationStatus: Commitment;
}

export type ChainEvent =
  | { type: 'slot'; slot: number; parent: number; root: number }
  | { type: 'status'; signature: string; slot: number; commitment: Commitment; err: RpcTxError | null };

export interface Chain {
  readonly svm: LiteSVM;
  readonly genesisHash: string;
  readonly faucet: Keypair;
  tipSlot(): number;
  slotAt(c: Commitment): number;
  blockAt(c: Commitment): BlockRecord;
  finalizedSlot(): number;
  pendingSlot(): number;
  blockHeightAt(c: Commitment): number;
  getBlock(slot: number): BlockRecord | undefined;
  blockSlots(start: number, end: number): number[];
  isBlockhashValid(blockhash: string): boolean;
  /** Known and unexpired at the commitment's bank (isBlockhashValid, preflight and simulation ask this). */
  isBlockhashValidAt(blockhash: string, c: Commitment): boolean;
  lastValidBlockHeight(blockhash: string): number | null;
  /** Preflight runs at `preflightCommitment`, default finalized, as a node's sendTransaction. */
  submit(bytes: Uint8Array, opts: { skipPreflight?: boolean; preflightCommitment?: Commitment }): string;
  simulate(bytes: Uint8Array, opts: SimulateOptions): SimulationResult;
  feeForMessage(messageBytes: Uint8Array): bigint | null;
  airdrop(address: string, lamports: bigint): string;
  signatureStatus(signature: string, searchHistory: boolean): SignatureStatus | null;
  findTransaction(signature: string): { record: TxRecord; block: BlockRecord } | null;
  /** A landed transaction's record, sealed or still in the pending slot. */
  recordOf(signature: string): TxRecord | null;
  signaturesForAddress(
    address: string,
    opts: { before?: string; until?: string; limit: number },
  ): Array<{ record: TxRecord; block: BlockRecord }>;
  getAccount(address: string): AccountSnapshot | null;
  /** The account as of the asked commitment (processed = latest executed state). */
  accountAt(address: string, c: Commitment): AccountSnapshot | null;
  decimalsOf(mint: string): number | null;
  transactionCount(): number;
  advance(n: number): void;
  skipSlot(slot: number): void;
  expireBlockhashesNow(): void;
  subscribe(fn: (e: ChainEvent) => void): () => void;
  start(): void;
  stop(): void;
}

export function createChain(opts: ChainOptions): Chain {
  const log = logger('localnet.chain');
  const ledger = opts.ledger ?? null;
  const faucet = Keypair.fromSeed(sha('oncepay-localnet-faucet'));
  const listeners = new Set<(e: ChainEvent) => void>();
  const blocks = createBlockIndex();
  const history = createAccountHistory();
  const { svm, genesisHash } = openGenesis({
    ledger,
    faucet,
    programs: opts.programs ?? [],
    blocks,
    finalityDepth: opts.finalityDepth,
    tokenProgram: opts.tokenProgram,
  });
  const at = (c: Commitment): BlockRecord => (c === 'finalized' ? blocks.finalized() : blocks.tip());
  const isBlockhashValidAt = (bh: string, c: Commitment): boolean => blocks.isBlockhashValidAt(bh, at(c));
  const exec = createExecutor(svm, {
    isBlockhashValidAt,
    blockAt: at,
    maxBlockhashAge: MAX_BLOCKHASH_AGE,
    accountAt: (address, c) => accountAt(address, c),
  });
  const accountAt = (address: string, c: Commitment): AccountSnapshot | null => {
    const current = exec.getAccount(address);
    if (c === 'processed') return current;
    return history.at(address, at(c).slot, current);
  };
  const skipped = new Set<number>();
  // Account keys of executed transactions, until their block is indexed (saves decoding them again).
  const keysOf = new WeakMap<TxRecord, string[]>();
  let pending: { slot: number; txs: TxRecord[]; sigs: Map<string, TxRecord> };
  let dirty = false;
  let timer: NodeJS.Timeout | null = null;
  let airdropCounter = 0;

  const emit = (e: ChainEvent): void => {
    for (const fn of listeners) {
      try {
        fn(e);
      } catch (err) {
        log.warn({ err }, 'chain listener failed');
      }
    }
  };

  const setClock = (slot: number): void => {
    const n = nativeOf(svm);
    const c = n.getClock();
    c.slot = BigInt(slot);
    c.unixTimestamp = BigInt(Math.floor(Date.now() / 1000));
    n.setClock(c);
  };

  pending = { slot: blocks.tip().slot + 1, txs: [], sigs: new Map() };
  setClock(pending.slot);
  nativeOf(svm).setSlotHashes(blocks.slotHashes());

  const advanceFinality = (): BlockRecord[] => {
    const newly = blocks.advanceFinality(opts.finalityDepth);
    history.prune(blocks.finalized().slot);
    return newly;
  };

  const submit: Chain['submit'] = (bytes, o) => {
    const wire = exec.decode(bytes);
    const loadedAddrs = exec.resolve(wire);
    const landed = blocks.locate(wire.signature);
    const known = landed !== undefined || pending.sigs.has(wire.signature);
    if (!o.skipPreflight) {
      // The node's preflight bank is the commitment's: what landed above it is unknown there.
      const c = o.preflightCommitment ?? 'finalized';
      const alreadyProcessed = c === 'processed' ? known : landed !== undefined && landed.block.slot <= at(c).slot;
      exec.preflight(wire, {
        blockhashValid: isBlockhashValidAt(wire.recentBlockhash, c),
        alreadyProcessed,
        landedAbove: known && !alreadyProcessed,
      });
    }
    // A node answers with the signature and drops what cannot land (duplicate, expired, unsigned).
    if (known || !blocks.isBlockhashValid(wire.recentBlockhash)) return wire.signature;
    const done = exec.execute(wire, loadedAddrs, pending.slot);
    if (done) {
      history.record(pending.slot, done.keys, done.pre, done.post);
      failpoint('localnet.after_execute_before_seal');
      const rec = done.record;
      keysOf.set(rec, done.keys);
      pending.txs.push(rec);
      pending.sigs.set(rec.signature, rec);
      emit({ type: 'status', signature: rec.signature, slot: pending.slot, commitment: 'processed', err: done.err });
    }
    return wire.signature;
  };

  const sealOne = (): void => {
    const slot = pending.slot;
    if (skipped.has(slot)) {
      // No block for this slot: what executed in it lands in the next one.
      skipped.delete(slot);
      pending.slot = slot + 1;
      for (const t of pending.txs) t.slot = pending.slot;
      setClock(pending.slot);
      return;
    }
    const prev = blocks.tip();
    const blockhash = bs58.encode(sha(prev.blockhash, String(slot), ...pending.txs.map((t) => t.signature)));
    const block: BlockRecord = {
      slot,
      parentSlot: prev.slot,
      blockhash,
      previousBlockhash: prev.blockhash,
      blockHeight: prev.blockHeight + 1,
      blockTime: Math.floor(Date.now() / 1000),
      txs: pending.txs,
    };
    for (const t of block.txs) t.slot = slot;
    blocks.add(block, (t) => {
      const keys = keysOf.get(t);
      keysOf.delete(t);
      return keys;
    });
    nativeOf(svm).setSlotHashes(blocks.slotHashes());
    if (ledger) {
      if (block.txs.length > 0 || dirty) ledger.writeSnapshot(svm.toBytes(), block);
      if (block.txs.length > 0) failpoint('localnet.after_snapshot_before_append');
      ledger.appendBlock(block);
      dirty = false;
    }
    pending = { slot: slot + 1, txs: [], sigs: new Map() };
    setClock(pending.slot);
    const newlyFinal = advanceFinality();
    emit({ type: 'slot', slot, parent: prev.slot, root: blocks.finalized().slot });
    for (const t of block.txs)
      emit({ type: 'status', signature: t.signature, slot, commitment: 'confirmed', err: t.meta.err });
    for (const b of newlyFinal) {
      for (const t of b.txs)
        emit({ type: 'status', signature: t.signature, slot: b.slot, commitment: 'finalized', err: t.meta.err });
    }
  };

  const chain: Chain = {
    get svm() {
      return svm;
    },
    genesisHash,
    faucet,
    tipSlot: () => blocks.tip().slot,
    slotAt: (c) => at(c).slot,
    blockAt: at,
    finalizedSlot: () => blocks.finalized().slot,
    pendingSlot: () => pending.slot,
    blockHeightAt: (c) => at(c).blockHeight,
    getBlock: blocks.get,
    blockSlots: blocks.slotsIn,
    isBlockhashValid: blocks.isBlockhashValid,
    isBlockhashValidAt,
    lastValidBlockHeight: blocks.lastValidBlockHeight,
    submit,
    simulate: exec.simulate,
    feeForMessage(messageBytes) {
      let priced: { recentBlockhash: string; fee: bigint };
      try {
        priced = messageFee(messageBytes);
      } catch (e) {
        if (isOncepayError(e)) throw invalidParams((e as Error).message);
        throw e;
      }
      return blocks.isBlockhashValid(priced.recentBlockhash) ? priced.fee : null;
    },
    airdrop(address, lamports) {
      let to: PublicKey;
      try {
        to = new PublicKey(address);
      } catch {
        throw invalidParams('Invalid param: Invalid');
      }
      // A faucet transfer in a real block (a status, a signature to confirm), unique per request.
      const tx = new Transaction({ feePayer: faucet.publicKey, recentBlockhash: blocks.tip().blockhash })
        .add(ComputeBudgetProgram.setComputeUnitLimit({ units: 1000 + (airdropCounter++ % 100_000) }))
        .add(SystemProgram.transfer({ fromPubkey: faucet.publicKey, toPubkey: to, lamports }));
      tx.sign(faucet);
      return submit(tx.serialize(), { skipPreflight: false, preflightCommitment: 'processed' });
    },
    signatureStatus(signature, searchHistory) {
      const p = pending.sigs.get(signature);
      if (p)
        return {
          slot: pending.slot,
          confirmations: 0,
          err: p.meta.err,
          status: p.meta.status,
          confirmationStatus: 'processed',
        };
      const loc = blocks.locate(signature);
      if (!loc) return null;
      const tip = blocks.tip().slot;
      if (!searchHistory && tip - loc.block.slot > STATUS_CACHE_SLOTS) return null;
      const t = loc.block.txs[loc.index];
      const final = loc.block.slot <= blocks.finalized().slot;
      return {
        slot: loc.block.slot,
        // A node counts the votes on top of the slot (1 once it is confirmed), up to its tower's 32; null once rooted.
        confirmations: final ? null : Math.min(tip - loc.block.slot + 1, MAX_CONFIRMATIONS),
        err: t.meta.err,
        status: t.meta.status,
        confirmationStatus: final ? 'finalized' : 'confirmed',
      };
    },
    recordOf(signature) {
      const p = pending.sigs.get(signature);
      if (p) return p;
      const loc = blocks.locate(signature);
      return loc ? loc.block.txs[loc.index] : null;
    },
    findTransaction(signature) {
      const loc = blocks.locate(signature);
      return loc ? { record: loc.block.txs[loc.index], block: loc.block } : null;
    },
    signaturesForAddress: blocks.signaturesForAddress,
    getAccount: exec.getAccount,
    accountAt,
    decimalsOf: exec.decimalsOf,
    transactionCount: () => blocks.transactionCount() + pending.txs.length,
    advance(n) {
      for (let i = 0; i < n; i++) sealOne();
    },
    skipSlot(slot) {
      if (slot < pending.slot) throw invalidParams(`slot ${slot} is already past (next slot is ${pending.slot})`);
      skipped.add(slot);
    },
    expireBlockhashesNow() {
      // Real expiry: enough blocks pass that every earlier blockhash is older than MAX_BLOCKHASH_AGE.
      chain.advance(MAX_BLOCKHASH_AGE + 1);
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    start() {
      if (opts.slotMs > 0 && !timer) {
        timer = setInterval(() => {
          try {
            sealOne();
          } catch (err) {
            log.error({ err }, 'sealing a slot failed');
          }
        }, opts.slotMs);
        timer.unref?.();
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      if (ledger) {
        // Pending transactions are sealed so nothing executed is lost from history on a clean stop.
        if (pending.txs.length > 0) sealOne();
        ledger.writeSnapshot(svm.toBytes(), blocks.tip());
        ledger.close();
      }
    },
  };
  // Tests may mutate the svm directly (setAccount): mark state dirty so the next block snapshots it.
  const origSet = svm.setAccount.bind(svm);
  svm.setAccount = ((a: Parameters<LiteSVM['setAccount']>[0]) => {
    dirty = true;
    origSet(a);
  }) as LiteSVM['setAccount'];
  return chain;
}
