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
import { Executor, SimulateOptions, SimulationResult, createExecutor, nativeOf } from './execution';
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

/** The transactions executed into the slot not yet sealed. */
interface PendingSlot {
  slot: number;
  txs: TxRecord[];
  sigs: Map<string, TxRecord>;
}

/** Everything the chain's steps share; createChain builds it once and each step below takes it explicitly. */
interface ChainState {
  readonly opts: ChainOptions;
  readonly log: ReturnType<typeof logger>;
  readonly ledger: LedgerStore | null;
  readonly faucet: Keypair;
  readonly svm: LiteSVM;
  readonly genesisHash: string;
  readonly blocks: ReturnType<typeof createBlockIndex>;
  readonly history: ReturnType<typeof createAccountHistory>;
  readonly exec: Executor;
  readonly listeners: Set<(e: ChainEvent) => void>;
  readonly skipped: Set<number>;
  /** Account keys of executed transactions, until their block is indexed (saves decoding them again). */
  readonly keysOf: WeakMap<TxRecord, string[]>;
  pending: PendingSlot;
  /** The svm was changed outside a transaction (a test's setAccount): the next block snapshots it. */
  dirty: boolean;
  timer: NodeJS.Timeout | null;
  airdropCounter: number;
}

function at(s: ChainState, c: Commitment): BlockRecord {
  return c === 'finalized' ? s.blocks.finalized() : s.blocks.tip();
}

function isBlockhashValidAt(s: ChainState, bh: string, c: Commitment): boolean {
  return s.blocks.isBlockhashValidAt(bh, at(s, c));
}

function accountAt(s: ChainState, address: string, c: Commitment): AccountSnapshot | null {
  const current = s.exec.getAccount(address);
  if (c === 'processed') return current;
  return s.history.at(address, at(s, c).slot, current);
}

function emit(s: ChainState, e: ChainEvent): void {
  for (const fn of s.listeners) {
    try {
      fn(e);
    } catch (err) {
      s.log.warn({ err }, 'chain listener failed');
    }
  }
}

function setClock(svm: LiteSVM, slot: number): void {
  const n = nativeOf(svm);
  const c = n.getClock();
  c.slot = BigInt(slot);
  c.unixTimestamp = BigInt(Math.floor(Date.now() / 1000));
  n.setClock(c);
}

/** Preflight runs at `preflightCommitment`, default finalized, as a node's sendTransaction. */
function submit(s: ChainState, bytes: Uint8Array, o: { skipPreflight?: boolean; preflightCommitment?: Commitment }) {
  const wire = s.exec.decode(bytes);
  const loadedAddrs = s.exec.resolve(wire);
  const landed = s.blocks.locate(wire.signature);
  const known = landed !== undefined || s.pending.sigs.has(wire.signature);
  if (!o.skipPreflight) {
    // The node's preflight bank is the commitment's: what landed above it is unknown there.
    const c = o.preflightCommitment ?? 'finalized';
    const alreadyProcessed = c === 'processed' ? known : landed !== undefined && landed.block.slot <= at(s, c).slot;
    s.exec.preflight(wire, {
      blockhashValid: isBlockhashValidAt(s, wire.recentBlockhash, c),
      alreadyProcessed,
      landedAbove: known && !alreadyProcessed,
    });
  }
  // A node answers with the signature and drops what cannot land (duplicate, expired, unsigned).
  if (known || !s.blocks.isBlockhashValid(wire.recentBlockhash)) return wire.signature;
  const done = s.exec.execute(wire, loadedAddrs, s.pending.slot);
  if (done) {
    s.history.record(s.pending.slot, done.keys, done.pre, done.post);
    failpoint('localnet.after_execute_before_seal');
    const rec = done.record;
    s.keysOf.set(rec, done.keys);
    s.pending.txs.push(rec);
    s.pending.sigs.set(rec.signature, rec);
    emit(s, { type: 'status', signature: rec.signature, slot: s.pending.slot, commitment: 'processed', err: done.err });
  }
  return wire.signature;
}

/** A skipped slot has no block: what executed in it lands in the next one. */
function skipPendingSlot(s: ChainState): void {
  s.skipped.delete(s.pending.slot);
  s.pending.slot += 1;
  for (const t of s.pending.txs) t.slot = s.pending.slot;
  setClock(s.svm, s.pending.slot);
}

/** The pending slot's transactions as the next block on the tip, indexed (and written to the ledger, if any). */
function indexBlock(s: ChainState, slot: number, prev: BlockRecord): BlockRecord {
  const txs = s.pending.txs;
  const block: BlockRecord = {
    slot,
    parentSlot: prev.slot,
    blockhash: bs58.encode(sha(prev.blockhash, String(slot), ...txs.map((t) => t.signature))),
    previousBlockhash: prev.blockhash,
    blockHeight: prev.blockHeight + 1,
    blockTime: Math.floor(Date.now() / 1000),
    txs,
  };
  for (const t of block.txs) t.slot = slot;
  s.blocks.add(block, (t) => {
    const keys = s.keysOf.get(t);
    s.keysOf.delete(t);
    return keys;
  });
  nativeOf(s.svm).setSlotHashes(s.blocks.slotHashes());
  if (s.ledger) {
    if (block.txs.length > 0 || s.dirty) s.ledger.writeSnapshot(s.svm.toBytes(), block);
    if (block.txs.length > 0) failpoint('localnet.after_snapshot_before_append');
    s.ledger.appendBlock(block);
    s.dirty = false;
  }
  return block;
}

/** Seals the pending slot into a block, moves finality, and tells the listeners (slot, confirmed, finalized). */
function sealOne(s: ChainState): void {
  const slot = s.pending.slot;
  if (s.skipped.has(slot)) return skipPendingSlot(s);
  const prev = s.blocks.tip();
  const block = indexBlock(s, slot, prev);
  s.pending = { slot: slot + 1, txs: [], sigs: new Map() };
  setClock(s.svm, s.pending.slot);
  const newlyFinal = s.blocks.advanceFinality(s.opts.finalityDepth);
  s.history.prune(s.blocks.finalized().slot);
  emit(s, { type: 'slot', slot, parent: prev.slot, root: s.blocks.finalized().slot });
  for (const t of block.txs)
    emit(s, { type: 'status', signature: t.signature, slot, commitment: 'confirmed', err: t.meta.err });
  for (const b of newlyFinal) {
    for (const t of b.txs)
      emit(s, { type: 'status', signature: t.signature, slot: b.slot, commitment: 'finalized', err: t.meta.err });
  }
}

function feeForMessage(s: ChainState, messageBytes: Uint8Array): bigint | null {
  let priced: { recentBlockhash: string; fee: bigint };
  try {
    priced = messageFee(messageBytes);
  } catch (e) {
    if (isOncepayError(e)) throw invalidParams((e as Error).message);
    throw e;
  }
  return s.blocks.isBlockhashValid(priced.recentBlockhash) ? priced.fee : null;
}

/** A faucet transfer in a real block (a status, a signature to confirm), unique per request. */
function airdrop(s: ChainState, address: string, lamports: bigint): string {
  let to: PublicKey;
  try {
    to = new PublicKey(address);
  } catch {
    throw invalidParams('Invalid param: Invalid');
  }
  const tx = new Transaction({ feePayer: s.faucet.publicKey, recentBlockhash: s.blocks.tip().blockhash })
    .add(ComputeBudgetProgram.setComputeUnitLimit({ units: 1000 + (s.airdropCounter++ % 100_000) }))
    .add(SystemProgram.transfer({ fromPubkey: s.faucet.publicKey, toPubkey: to, lamports }));
  tx.sign(s.faucet);
  return submit(s, tx.serialize(), { skipPreflight: false, preflightCommitment: 'processed' });
}

function signatureStatus(s: ChainState, signature: string, searchHistory: boolean): SignatureStatus | null {
  const p = s.pending.sigs.get(signature);
  if (p)
    return {
      slot: s.pending.slot,
      confirmations: 0,
      err: p.meta.err,
      status: p.meta.status,
      confirmationStatus: 'processed',
    };
  const loc = s.blocks.locate(signature);
  if (!loc) return null;
  const tip = s.blocks.tip().slot;
  if (!searchHistory && tip - loc.block.slot > STATUS_CACHE_SLOTS) return null;
  const t = loc.block.txs[loc.index];
  const final = loc.block.slot <= s.blocks.finalized().slot;
  return {
    slot: loc.block.slot,
    // A node counts the votes on top of the slot (1 once it is confirmed), up to its tower's 32; null once rooted.
    confirmations: final ? null : Math.min(tip - loc.block.slot + 1, MAX_CONFIRMATIONS),
    err: t.meta.err,
    status: t.meta.status,
    confirmationStatus: final ? 'finalized' : 'confirmed',
  };
}

function recordOf(s: ChainState, signature: string): TxRecord | null {
  const p = s.pending.sigs.get(signature);
  if (p) return p;
  const loc = s.blocks.locate(signature);
  return loc ? loc.block.txs[loc.index] : null;
}

function start(s: ChainState): void {
  if (s.opts.slotMs > 0 && !s.timer) {
    s.timer = setInterval(() => {
      try {
        sealOne(s);
      } catch (err) {
        s.log.error({ err }, 'sealing a slot failed');
      }
    }, s.opts.slotMs);
    s.timer.unref?.();
  }
}

function stop(s: ChainState): void {
  if (s.timer) clearInterval(s.timer);
  s.timer = null;
  if (s.ledger) {
    // Pending transactions are sealed so nothing executed is lost from history on a clean stop.
    if (s.pending.txs.length > 0) sealOne(s);
    s.ledger.writeSnapshot(s.svm.toBytes(), s.blocks.tip());
    s.ledger.close();
  }
}

/** Genesis (or the ledger's restore), the executor wired to this chain's banks, and the first pending slot. */
function openChain(opts: ChainOptions): ChainState {
  const ledger = opts.ledger ?? null;
  const faucet = Keypair.fromSeed(sha('oncepay-localnet-faucet'));
  const blocks = createBlockIndex();
  const { svm, genesisHash } = openGenesis({
    ledger,
    faucet,
    programs: opts.programs ?? [],
    blocks,
    finalityDepth: opts.finalityDepth,
    tokenProgram: opts.tokenProgram,
  });
  const s: ChainState = {
    opts,
    log: logger('localnet.chain'),
    ledger,
    faucet,
    svm,
    genesisHash,
    blocks,
    history: createAccountHistory(),
    exec: createExecutor(svm, {
      isBlockhashValidAt: (bh, c) => isBlockhashValidAt(s, bh, c),
      blockAt: (c) => at(s, c),
      maxBlockhashAge: MAX_BLOCKHASH_AGE,
      accountAt: (address, c) => accountAt(s, address, c),
    }),
    listeners: new Set(),
    skipped: new Set(),
    keysOf: new WeakMap(),
    pending: { slot: blocks.tip().slot + 1, txs: [], sigs: new Map() },
    dirty: false,
    timer: null,
    airdropCounter: 0,
  };
  setClock(svm, s.pending.slot);
  nativeOf(svm).setSlotHashes(blocks.slotHashes());
  // Tests may mutate the svm directly (setAccount): mark state dirty so the next block snapshots it.
  const origSet = svm.setAccount.bind(svm);
  svm.setAccount = ((a: Parameters<LiteSVM['setAccount']>[0]) => {
    s.dirty = true;
    origSet(a);
  }) as LiteSVM['setAccount'];
  return s;
}

export function createChain(opts: ChainOptions): Chain {
  const s = openChain(opts);
  const { blocks, exec } = s;
  const chain: Chain = {
    get svm() {
      return s.svm;
    },
    genesisHash: s.genesisHash,
    faucet: s.faucet,
    tipSlot: () => blocks.tip().slot,
    slotAt: (c) => at(s, c).slot,
    blockAt: (c) => at(s, c),
    finalizedSlot: () => blocks.finalized().slot,
    pendingSlot: () => s.pending.slot,
    blockHeightAt: (c) => at(s, c).blockHeight,
    getBlock: blocks.get,
    blockSlots: blocks.slotsIn,
    isBlockhashValid: blocks.isBlockhashValid,
    isBlockhashValidAt: (bh, c) => isBlockhashValidAt(s, bh, c),
    lastValidBlockHeight: blocks.lastValidBlockHeight,
    submit: (bytes, o) => submit(s, bytes, o),
    simulate: exec.simulate,
    feeForMessage: (messageBytes) => feeForMessage(s, messageBytes),
    airdrop: (address, lamports) => airdrop(s, address, lamports),
    signatureStatus: (signature, searchHistory) => signatureStatus(s, signature, searchHistory),
    recordOf: (signature) => recordOf(s, signature),
    findTransaction(signature) {
      const loc = blocks.locate(signature);
      return loc ? { record: loc.block.txs[loc.index], block: loc.block } : null;
    },
    signaturesForAddress: blocks.signaturesForAddress,
    getAccount: exec.getAccount,
    accountAt: (address, c) => accountAt(s, address, c),
    decimalsOf: exec.decimalsOf,
    transactionCount: () => blocks.transactionCount() + s.pending.txs.length,
    advance(n) {
      for (let i = 0; i < n; i++) sealOne(s);
    },
    skipSlot(slot) {
      if (slot < s.pending.slot) throw invalidParams(`slot ${slot} is already past (next slot is ${s.pending.slot})`);
      s.skipped.add(slot);
    },
    expireBlockhashesNow() {
      // Real expiry: enough blocks pass that every earlier blockhash is older than MAX_BLOCKHASH_AGE.
      chain.advance(MAX_BLOCKHASH_AGE + 1);
    },
    subscribe(fn) {
      s.listeners.add(fn);
      return () => s.listeners.delete(fn);
    },
    start: () => start(s),
    stop: () => stop(s),
  };
  return chain;
}
