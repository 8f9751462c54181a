// The chain: LiteSVM executes, this module makes slots, blocks, commitment and blockhash expiry around it.
// Transactions execute at once into the pending slot; sealing the slot turns them into a block (status
// processed → confirmed), and `finalityDepth` slots later the block is finalized. One fork, no votes, no leaders.
import crypto from 'node:crypto';
import {
  Keypair,
  SystemProgram,
  Transaction,
  ComputeBudgetProgram,
  PublicKey,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { LiteSVM } from 'litesvm';
import { OncepayError, isOncepayError } from '../common/errors';
import { failpoint } from '../common/failpoint';
import { logger } from '../common/log';
import { LOCALNET_CODES } from './codes';
import { LAMPORTS_PER_SIGNATURE, messageFee } from './fee';
import {
  AccountSnapshot,
  ExecutionCapture,
  RpcMeta,
  RpcTxError,
  buildMeta,
  isExecutionError,
  rpcInnerInstructions,
  toRpcTxError,
  txErrorMessage,
} from './encode';
import type { LedgerStore } from './persist';
import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID, SYSTEM_PROGRAM_ID } from './program-ids';
import { RPC, RpcError, invalidParams } from './rpc-error';
import { decodeMint } from './token-state';
import type { BlockRecord, Commitment, TxRecord } from './types';
import {
  LoadedAddresses,
  WireTransaction,
  allAccountKeys,
  decodeWireTransaction,
  lookupTableAddresses,
  resolveLookups,
} from './wire';

/** Blocks a blockhash stays usable for (Agave MAX_PROCESSING_AGE); lastValidBlockHeight = height + this. */
export const MAX_BLOCKHASH_AGE = 150;
/** Slots the status cache answers for without searchTransactionHistory (Agave MAX_CACHE_ENTRIES). */
const STATUS_CACHE_SLOTS = 300;
const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;
/** Entries in the SlotHashes sysvar (Agave MAX_ENTRIES); address lookup table creation checks recent slots in it. */
const SLOT_HASHES_MAX = 512;

// LiteSVM's native object (the public class wraps it in `inner`): we feed it wire bytes directly.
interface NativeAccount {
  lamports(): bigint;
  data(): Uint8Array;
  owner(): Uint8Array;
  executable(): boolean;
  rentEpoch(): bigint;
}
interface NativeMeta {
  logs(): string[];
  innerInstructions(): Array<
    Array<{
      instruction(): { programIdIndex(): number; accounts(): Uint8Array; data(): Uint8Array };
      stackHeight(): number;
    }>
  >;
  computeUnitsConsumed(): bigint;
  returnData(): { programId(): Uint8Array; data(): Uint8Array };
  toString(): string;
}
// Send returns TransactionMetadata (success) or FailedTransactionMetadata {err(), meta()}; simulate returns
// SimulatedTransactionInfo {meta(), postAccounts()} or FailedTransactionMetadata.
interface NativeResult {
  err?: () => unknown;
  meta?: () => NativeMeta;
  postAccounts?: () => Array<{ address: Uint8Array; account(): NativeAccount }>;
}

function metaOf(r: NativeResult): NativeMeta {
  return typeof r.meta === 'function' ? r.meta() : (r as unknown as NativeMeta);
}
interface NativeSvm {
  getAccount(address: Uint8Array): NativeAccount | null;
  sendLegacyTransaction(bytes: Uint8Array): NativeResult;
  sendVersionedTransaction(bytes: Uint8Array): NativeResult;
  simulateLegacyTransaction(bytes: Uint8Array): NativeResult;
  simulateVersionedTransaction(bytes: Uint8Array): NativeResult;
  getTransaction(signature: Uint8Array): unknown;
  setSigverify(v: boolean): void;
  setBlockhashCheck(v: boolean): void;
  setTransactionHistory(n: bigint): void;
  getClock(): { slot: bigint; unixTimestamp: bigint };
  setClock(c: unknown): void;
  setSlotHashes(hashes: Array<{ slot: bigint; hash: string }>): void;
}

export interface ProgramSpec {
  programId: string;
  path: string;
}

export interface ChainOptions {
  slotMs: number;
  finalityDepth: number;
  programs?: ProgramSpec[];
  ledger?: LedgerStore | null;
}

export interface SimulationResult {
  err: RpcTxError | null;
  logs: string[];
  unitsConsumed: bigint;
  returnData: { programId: string; data: [string, 'base64'] } | null;
  innerInstructions: RpcMeta['innerInstructions'];
  postAccounts: Map<string, AccountSnapshot | null>;
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null;
  fee: bigint;
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

interface Located {
  block: BlockRecord;
  index: number;
  seq: number;
}

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
  lastValidBlockHeight(blockhash: string): number | null;
  submit(bytes: Uint8Array, opts: { skipPreflight?: boolean }): string;
  simulate(
    bytes: Uint8Array,
    opts: { sigVerify?: boolean; replaceRecentBlockhash?: boolean; accounts?: string[] },
  ): SimulationResult;
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

function nativeOf(svm: LiteSVM): NativeSvm {
  return (svm as unknown as { inner: NativeSvm }).inner;
}

function snapshotOf(a: NativeAccount | null): AccountSnapshot | null {
  if (!a) return null;
  const lamports = a.lamports();
  const data = Uint8Array.from(a.data());
  if (lamports === 0n && data.length === 0) return null;
  return { lamports, owner: bs58.encode(a.owner()), data, executable: a.executable(), rentEpoch: a.rentEpoch() };
}

function sameAccount(a: AccountSnapshot | null, b: AccountSnapshot | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.lamports === b.lamports &&
    a.owner === b.owner &&
    a.executable === b.executable &&
    Buffer.from(a.data).equals(Buffer.from(b.data))
  );
}

function configure(svm: LiteSVM): void {
  const n = nativeOf(svm);
  n.setSigverify(true);
  // Blockhash age is ours: LiteSVM only knows its latest blockhash, a node accepts the last 150 blocks' hashes.
  n.setBlockhashCheck(false);
}

function sha(...parts: Array<string | Uint8Array>): Uint8Array {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

/** LiteSVM's inner instructions, per top-level instruction (indexes into the transaction's keys). */
function innerOf(meta: NativeMeta): ExecutionCapture['inner'] {
  return meta.innerInstructions().map((list) =>
    list.map((ii) => ({
      programIdIndex: ii.instruction().programIdIndex(),
      accounts: [...ii.instruction().accounts()],
      data: Uint8Array.from(ii.instruction().data()),
      stackHeight: ii.stackHeight(),
    })),
  );
}

function feeOf(meta: NativeMeta, tx: WireTransaction): bigint {
  // LiteSVM reports the fee it charged only in its Debug text (`fee: 5000`); fall back to the signature fee.
  const m = /fee: ([0-9]+)/.exec(meta.toString());
  return m ? BigInt(m[1]) : LAMPORTS_PER_SIGNATURE * BigInt(tx.header.numRequiredSignatures);
}

/** The -32002 error a node returns when preflight simulation fails. */
function preflightFailure(err: RpcTxError, logs: string[], units: bigint, returnData: unknown = null): RpcError {
  return new RpcError(RPC.SEND_TRANSACTION_PREFLIGHT_FAILURE, `Transaction simulation failed: ${txErrorMessage(err)}`, {
    accounts: null,
    err,
    innerInstructions: null,
    loadedAccountsDataSize: null,
    logs,
    replacementBlockhash: null,
    returnData,
    unitsConsumed: units,
  });
}

export function createChain(opts: ChainOptions): Chain {
  const log = logger('localnet.chain');
  const ledger = opts.ledger ?? null;
  const faucet = Keypair.fromSeed(sha('oncepay-localnet-faucet'));
  const listeners = new Set<(e: ChainEvent) => void>();

  const blocks = new Map<number, BlockRecord>();
  const slots: number[] = []; // ascending slots that have a block
  const sigIndex = new Map<string, Located>();
  const addrIndex = new Map<string, string[]>(); // address → signatures, in landing order
  const blockhashHeights = new Map<string, number>();
  const skipped = new Set<number>();
  // Undo log: per account, its state before each change, with the slot of the change. Reading at slot S = the
  // `pre` of the first change after S, else the current state. Entries at or below the finalized slot are pruned.
  const undo = new Map<string, Array<{ slot: number; pre: AccountSnapshot | null }>>();
  const undoQueue: Array<{ slot: number; address: string }> = [];
  let undoHead = 0;
  const keysOf = new WeakMap<TxRecord, string[]>();
  let seq = 0;
  let finIdx = 0; // index into `slots` of the finalized block
  let pending: { slot: number; txs: TxRecord[]; sigs: Map<string, TxRecord> };
  let dirty = false;
  let timer: NodeJS.Timeout | null = null;
  let airdropCounter = 0;

  let svm: LiteSVM;
  let genesisHash: string;
  const loaded = ledger?.load() ?? null;

  const emit = (e: ChainEvent): void => {
    for (const fn of listeners) {
      try {
        fn(e);
      } catch (err) {
        log.warn({ err }, 'chain listener failed');
      }
    }
  };

  const indexBlock = (b: BlockRecord): void => {
    blocks.set(b.slot, b);
    slots.push(b.slot);
    blockhashHeights.set(b.blockhash, b.blockHeight);
    b.txs.forEach((t, index) => {
      sigIndex.set(t.signature, { block: b, index, seq: seq++ });
      // Keys are known from execution; only records read back from the ledger are decoded again.
      const keys =
        keysOf.get(t) ?? allAccountKeys(decodeWireTransaction(Buffer.from(t.wire, 'base64')), t.meta.loadedAddresses);
      keysOf.delete(t);
      for (const k of new Set(keys)) {
        let list = addrIndex.get(k);
        if (!list) addrIndex.set(k, (list = []));
        list.push(t.signature);
      }
    });
  };

  const tipBlock = (): BlockRecord => blocks.get(slots[slots.length - 1])!;
  const finalizedBlock = (): BlockRecord => blocks.get(slots[finIdx])!;

  const advanceFinality = (): BlockRecord[] => {
    const target = tipBlock().slot - opts.finalityDepth;
    const newly: BlockRecord[] = [];
    while (finIdx + 1 < slots.length && slots[finIdx + 1] <= target) {
      finIdx++;
      newly.push(blocks.get(slots[finIdx])!);
    }
    const fin = slots[finIdx];
    while (undoHead < undoQueue.length && undoQueue[undoHead].slot <= fin) {
      const { address } = undoQueue[undoHead++];
      const list = undo.get(address)!;
      list.shift();
      if (list.length === 0) undo.delete(address);
    }
    // Compact now and then rather than shifting the queue one entry at a time.
    if (undoHead > 4096 && undoHead * 2 > undoQueue.length) {
      undoQueue.splice(0, undoHead);
      undoHead = 0;
    }
    return newly;
  };

  // Newest first, as the sysvar orders them.
  const recentHashes: Array<{ slot: bigint; hash: string }> = [];
  const pushSlotHash = (b: BlockRecord): void => {
    recentHashes.unshift({ slot: BigInt(b.slot), hash: b.blockhash });
    if (recentHashes.length > SLOT_HASHES_MAX) recentHashes.length = SLOT_HASHES_MAX;
  };

  const setClock = (slot: number): void => {
    const n = nativeOf(svm);
    const c = n.getClock();
    c.slot = BigInt(slot);
    c.unixTimestamp = BigInt(Math.floor(Date.now() / 1000));
    n.setClock(c);
  };

  if (loaded && (loaded.blocks.length === 0 || !loaded.snapshot)) {
    // Never start a fresh chain over a ledger we cannot read: that would silently forget its history.
    throw new OncepayError(
      LOCALNET_CODES.LEDGER_CORRUPT,
      `ledger ${ledger?.dir} has no ${loaded.snapshot ? 'blocks' : 'state.bin'}; start with --reset to wipe it`,
    );
  }
  if (loaded && loaded.snapshot) {
    svm = LiteSVM.fromBytes(loaded.snapshot);
    genesisHash = loaded.genesisHash;
    for (const b of loaded.blocks) indexBlock(b);
    for (const b of loaded.blocks.slice(-SLOT_HASHES_MAX)) pushSlotHash(b);
    advanceFinality();
    log.info({ dir: ledger?.dir, tip: tipBlock().slot, blocks: slots.length }, 'ledger restored');
  } else {
    svm = new LiteSVM();
    genesisHash = bs58.encode(sha('oncepay-localnet-genesis', crypto.randomBytes(32)));
    svm.setAccount({
      address: faucet.publicKey.toBase58() as never,
      lamports: FAUCET_LAMPORTS as never,
      programAddress: SYSTEM_PROGRAM_ID as never,
      executable: false,
      data: new Uint8Array(0),
      space: 0n,
    } as never);
    const genesis: BlockRecord = {
      slot: 0,
      parentSlot: 0,
      blockhash: genesisHash,
      previousBlockhash: bs58.encode(new Uint8Array(32)),
      blockHeight: 0,
      blockTime: Math.floor(Date.now() / 1000),
      txs: [],
    };
    indexBlock(genesis);
    pushSlotHash(genesis);
    if (ledger) {
      // genesis.json is written last: it marks the ledger as complete (without it, load() starts afresh).
      ledger.wipe();
      ledger.writeSnapshot(svm.toBytes(), genesis);
      ledger.appendBlock(genesis);
      ledger.init(genesisHash);
    }
  }
  configure(svm);
  for (const p of opts.programs ?? []) {
    try {
      svm.addProgramFromFile(p.programId as never, p.path);
    } catch (e) {
      throw new OncepayError(
        LOCALNET_CODES.PROGRAM_LOAD_FAILED,
        `cannot load program ${p.path}: ${(e as Error).message}`,
        { ...p },
      );
    }
  }
  pending = { slot: tipBlock().slot + 1, txs: [], sigs: new Map() };
  setClock(pending.slot);
  nativeOf(svm).setSlotHashes(recentHashes);

  const native = (): NativeSvm => nativeOf(svm);
  const getAccount = (address: string): AccountSnapshot | null => {
    let bytes: Uint8Array;
    try {
      bytes = new PublicKey(address).toBytes();
    } catch {
      throw invalidParams('Invalid param: Invalid');
    }
    return snapshotOf(native().getAccount(bytes));
  };
  const decimalsOf = (mint: string): number | null => {
    const a = getAccount(mint);
    return a ? (decodeMint(a.owner, a.data)?.decimals ?? null) : null;
  };

  const blockhashValid = (bh: string): boolean => {
    const h = blockhashHeights.get(bh);
    return h !== undefined && tipBlock().blockHeight + 1 <= h + MAX_BLOCKHASH_AGE;
  };

  const resolve = (wire: WireTransaction): LoadedAddresses => {
    if (wire.lookups.length === 0) return { writable: [], readonly: [] };
    try {
      return resolveLookups(wire.lookups, (key) => {
        const acct = getAccount(key);
        if (!acct || acct.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM_ID) {
          throw new OncepayError(LOCALNET_CODES.LOOKUP_TABLE_NOT_FOUND, `lookup table ${key} not found`);
        }
        return lookupTableAddresses(acct.data);
      });
    } catch (e) {
      if (isOncepayError(e, LOCALNET_CODES.LOOKUP_TABLE_NOT_FOUND)) {
        throw invalidParams("invalid transaction: Transaction loads an address table account that doesn't exist");
      }
      throw e;
    }
  };

  const decode = (bytes: Uint8Array): WireTransaction => {
    try {
      return decodeWireTransaction(bytes);
    } catch (e) {
      if (isOncepayError(e))
        throw invalidParams(
          `failed to deserialize solana_transaction::versioned::VersionedTransaction: ${(e as Error).message}`,
        );
      throw e;
    }
  };

  const runSim = (bytes: Uint8Array, wire: WireTransaction, sigVerify: boolean): NativeResult => {
    const n = native();
    n.setSigverify(sigVerify);
    try {
      return wire.version === 'legacy' ? n.simulateLegacyTransaction(bytes) : n.simulateVersionedTransaction(bytes);
    } finally {
      n.setSigverify(true);
    }
  };

  const simulate: Chain['simulate'] = (bytes, o) => {
    let wire = decode(bytes);
    let replacement: SimulationResult['replacementBlockhash'] = null;
    if (o.replaceRecentBlockhash) {
      const vt = VersionedTransaction.deserialize(bytes);
      const tip = tipBlock();
      vt.message.recentBlockhash = tip.blockhash;
      bytes = vt.serialize();
      wire = decode(bytes);
      replacement = { blockhash: tip.blockhash, lastValidBlockHeight: tip.blockHeight + MAX_BLOCKHASH_AGE };
    }
    const loadedAddrs = resolve(wire);
    const empty: SimulationResult = {
      err: null,
      logs: [],
      unitsConsumed: 0n,
      returnData: null,
      innerInstructions: [],
      postAccounts: new Map(),
      replacementBlockhash: replacement,
      fee: 0n,
    };
    if (!blockhashValid(wire.recentBlockhash)) return { ...empty, err: 'BlockhashNotFound' };
    const r = runSim(bytes, wire, o.sigVerify ?? false);
    const meta = metaOf(r);
    const err = r.err ? toRpcTxError(r.err()) : null;
    const post = new Map<string, AccountSnapshot | null>();
    if (r.postAccounts) {
      for (const pa of r.postAccounts()) post.set(bs58.encode(pa.address), snapshotOf(pa.account()));
    }
    const postAccounts = new Map<string, AccountSnapshot | null>();
    for (const a of o.accounts ?? []) postAccounts.set(a, post.has(a) ? post.get(a)! : getAccount(a));
    const rd = meta.returnData();
    return {
      err,
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
      returnData:
        rd.data().length > 0
          ? { programId: bs58.encode(rd.programId()), data: [Buffer.from(rd.data()).toString('base64'), 'base64'] }
          : null,
      innerInstructions: rpcInnerInstructions(innerOf(meta)),
      postAccounts,
      replacementBlockhash: replacement,
      fee: err === null || isExecutionError(err) ? feeOf(meta, wire) : 0n,
    };
  };

  const execute = (wire: WireTransaction, loadedAddrs: LoadedAddresses): void => {
    const n = native();
    const keys = allAccountKeys(wire, loadedAddrs);
    const pre = keys.map((k) => getAccount(k));
    const r = wire.version === 'legacy' ? n.sendLegacyTransaction(wire.bytes) : n.sendVersionedTransaction(wire.bytes);
    const err = r.err ? toRpcTxError(r.err()) : null;
    // Landed = executed, successfully or not (the fee is charged either way), which is what a leader puts in its
    // block; load-time failures (signature, blockhash, fee payer) never land. Asking LiteSVM's history instead
    // costs ~0.5 ms per call.
    if (err !== null && !isExecutionError(err)) {
      log.debug({ signature: wire.signature, err }, 'transaction dropped before execution');
      return;
    }
    const post = keys.map((k) => getAccount(k));
    keys.forEach((k, i) => {
      if (sameAccount(pre[i], post[i])) return;
      let list = undo.get(k);
      if (!list) undo.set(k, (list = []));
      list.push({ slot: pending.slot, pre: pre[i] });
      undoQueue.push({ slot: pending.slot, address: k });
    });
    const meta = metaOf(r);
    const decimals = (mint: string): number => {
      // The mint is usually one of the transaction's keys: prefer its post state, then pre, then current.
      const i = keys.indexOf(mint);
      const m = i >= 0 ? (post[i] ?? pre[i]) : null;
      const d = m ? decodeMint(m.owner, m.data)?.decimals : undefined;
      return d ?? decimalsOf(mint) ?? 0;
    };
    const rd = meta.returnData();
    const rpcMeta = buildMeta({
      keys,
      pre,
      post,
      decimalsOf: decimals,
      err,
      fee: feeOf(meta, wire),
      logs: meta.logs(),
      inner: innerOf(meta),
      computeUnits: meta.computeUnitsConsumed(),
      loaded: loadedAddrs,
      returnData: { programId: bs58.encode(rd.programId()), data: rd.data() },
    });
    failpoint('localnet.after_execute_before_seal');
    const rec: TxRecord = {
      signature: wire.signature,
      slot: pending.slot,
      wire: Buffer.from(wire.bytes).toString('base64'),
      meta: rpcMeta,
    };
    keysOf.set(rec, keys);
    pending.txs.push(rec);
    pending.sigs.set(rec.signature, rec);
    emit({ type: 'status', signature: rec.signature, slot: pending.slot, commitment: 'processed', err });
  };

  const submit: Chain['submit'] = (bytes, o) => {
    const wire = decode(bytes);
    const loadedAddrs = resolve(wire);
    const known = sigIndex.has(wire.signature) || pending.sigs.has(wire.signature);
    if (!o.skipPreflight) {
      if (known) throw preflightFailure('AlreadyProcessed', [], 0n);
      if (!blockhashValid(wire.recentBlockhash)) throw preflightFailure('BlockhashNotFound', [], 0n);
      const r = runSim(wire.bytes, wire, true);
      if (r.err) {
        const err = toRpcTxError(r.err());
        if (err === 'SignatureFailure')
          throw new RpcError(
            RPC.TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
            'Transaction signature verification failure',
          );
        const meta = metaOf(r);
        throw preflightFailure(err, meta.logs(), meta.computeUnitsConsumed());
      }
    }
    // A node answers with the signature and drops what cannot land (duplicate, expired, unsigned).
    if (known || !blockhashValid(wire.recentBlockhash)) return wire.signature;
    execute(wire, loadedAddrs);
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
    const prev = tipBlock();
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
    indexBlock(block);
    pushSlotHash(block);
    nativeOf(svm).setSlotHashes(recentHashes);
    if (ledger) {
      if (block.txs.length > 0 || dirty) ledger.writeSnapshot(svm.toBytes(), block);
      if (block.txs.length > 0) failpoint('localnet.after_snapshot_before_append');
      ledger.appendBlock(block);
      dirty = false;
    }
    pending = { slot: slot + 1, txs: [], sigs: new Map() };
    setClock(pending.slot);
    const newlyFinal = advanceFinality();
    emit({ type: 'slot', slot, parent: prev.slot, root: finalizedBlock().slot });
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
    tipSlot: () => tipBlock().slot,
    slotAt: (c) => (c === 'finalized' ? finalizedBlock().slot : tipBlock().slot),
    blockAt: (c) => (c === 'finalized' ? finalizedBlock() : tipBlock()),
    finalizedSlot: () => finalizedBlock().slot,
    pendingSlot: () => pending.slot,
    blockHeightAt: (c) => (c === 'finalized' ? finalizedBlock() : tipBlock()).blockHeight,
    getBlock: (slot) => blocks.get(slot),
    blockSlots(start, end) {
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
    isBlockhashValid: blockhashValid,
    lastValidBlockHeight: (bh) => {
      const h = blockhashHeights.get(bh);
      return h === undefined ? null : h + MAX_BLOCKHASH_AGE;
    },
    submit,
    simulate,
    feeForMessage(messageBytes) {
      let priced: { recentBlockhash: string; fee: bigint };
      try {
        priced = messageFee(messageBytes);
      } catch (e) {
        if (isOncepayError(e)) throw invalidParams((e as Error).message);
        throw e;
      }
      return blockhashValid(priced.recentBlockhash) ? priced.fee : null;
    },
    airdrop(address, lamports) {
      let to: PublicKey;
      try {
        to = new PublicKey(address);
      } catch {
        throw invalidParams('Invalid param: Invalid');
      }
      // A faucet transfer in a real block (a status, a signature to confirm), unique per request.
      const tx = new Transaction({ feePayer: faucet.publicKey, recentBlockhash: tipBlock().blockhash })
        .add(ComputeBudgetProgram.setComputeUnitLimit({ units: 1000 + (airdropCounter++ % 100_000) }))
        .add(SystemProgram.transfer({ fromPubkey: faucet.publicKey, toPubkey: to, lamports }));
      tx.sign(faucet);
      return submit(tx.serialize(), { skipPreflight: false });
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
      const loc = sigIndex.get(signature);
      if (!loc) return null;
      const tip = tipBlock().slot;
      if (!searchHistory && tip - loc.block.slot > STATUS_CACHE_SLOTS) return null;
      const t = loc.block.txs[loc.index];
      const final = loc.block.slot <= finalizedBlock().slot;
      return {
        slot: loc.block.slot,
        confirmations: final ? null : tip - loc.block.slot,
        err: t.meta.err,
        status: t.meta.status,
        confirmationStatus: final ? 'finalized' : 'confirmed',
      };
    },
    recordOf(signature) {
      const p = pending.sigs.get(signature);
      if (p) return p;
      const loc = sigIndex.get(signature);
      return loc ? loc.block.txs[loc.index] : null;
    },
    findTransaction(signature) {
      const loc = sigIndex.get(signature);
      return loc ? { record: loc.block.txs[loc.index], block: loc.block } : null;
    },
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
    getAccount,
    accountAt(address, c) {
      const current = getAccount(address);
      if (c === 'processed') return current;
      const list = undo.get(address);
      if (!list) return current;
      const at = c === 'finalized' ? finalizedBlock().slot : tipBlock().slot;
      const change = list.find((e) => e.slot > at);
      return change ? change.pre : current;
    },
    decimalsOf,
    transactionCount: () => sigIndex.size + pending.txs.length,
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
        ledger.writeSnapshot(svm.toBytes(), tipBlock());
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
