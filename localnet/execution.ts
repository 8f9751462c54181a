// Execution: LiteSVM runs the wire bytes; this module turns its results into what a node reports (RPC meta,
// simulation results, preflight refusals). It knows no slots or blocks beyond the two questions it asks the
// chain (is this blockhash still valid, what is the tip's blockhash).
import bs58 from 'bs58';
import type { Account, LiteSVM } from 'litesvm';
import { PublicKey, VersionedTransaction } from '@solana/web3.js';
import { OncepayError, isOncepayError } from '../common/errors';
import type { Logger } from 'pino';
import { logger } from '../common/log';
import { LOCALNET_CODES } from '../common/errors/codes';
import { costUnits, loadedAccountsDataSize } from './cost';
import {
  AccountSnapshot,
  ExecutionCapture,
  RpcMeta,
  RpcTokenBalance,
  RpcTxError,
  buildMeta,
  isExecutionError,
  rpcInnerInstructions,
  toRpcTxError,
  tokenBalances,
  txErrorMessage,
} from './encode';
import { LAMPORTS_PER_SIGNATURE } from './fee';
import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID } from './program-ids';
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
  signaturesVerify,
} from './wire';

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
export interface NativeSvm {
  getAccount(address: Uint8Array): NativeAccount | null;
  setAccount(address: Uint8Array, account: Account): void;
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

export interface SimulationResult {
  err: RpcTxError | null;
  logs: string[];
  unitsConsumed: bigint;
  returnData: { programId: string; data: [string, 'base64'] } | null;
  innerInstructions: RpcMeta['innerInstructions'];
  postAccounts: Map<string, AccountSnapshot | null>;
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null;
  /** null when the transaction was not loaded (signature, blockhash), as the node's. */
  fee: bigint | null;
  loadedAccountsDataSize: number;
  /** Per account key, before and after (the fee payer charged when execution failed); null after a sigVerify refusal. */
  preBalances: bigint[] | null;
  postBalances: bigint[] | null;
  preTokenBalances: RpcTokenBalance[] | null;
  postTokenBalances: RpcTokenBalance[] | null;
  loadedAddresses: LoadedAddresses;
}

export interface SimulateOptions {
  sigVerify?: boolean;
  replaceRecentBlockhash?: boolean;
  accounts?: string[];
  /** The bank it runs at (the blockhash must be known there); a node's default is finalized. */
  commitment?: Commitment;
}

/** What sendTransaction's preflight knows of the transaction at its commitment's bank. */
export interface PreflightView {
  /** The blockhash is known and unexpired at that bank. */
  blockhashValid: boolean;
  /** The signature landed at or under that bank (AlreadyProcessed there). */
  alreadyProcessed: boolean;
  /** The signature landed, but above that bank: the node would simulate it there and send; nothing to run. */
  landedAbove: boolean;
}

/** What one executed (landed) transaction did: its record and each account key's state before and after. */
export interface Executed {
  record: TxRecord;
  keys: string[];
  pre: Array<AccountSnapshot | null>;
  post: Array<AccountSnapshot | null>;
  err: RpcTxError | null;
}

export interface Executor {
  getAccount(address: string): AccountSnapshot | null;
  decimalsOf(mint: string): number | null;
  /** Decode wire bytes, refusing what a node cannot deserialize (-32602). */
  decode(bytes: Uint8Array): WireTransaction;
  /** The addresses a v0 transaction loads from lookup tables. */
  resolve(wire: WireTransaction): LoadedAddresses;
  simulate(bytes: Uint8Array, opts: SimulateOptions): SimulationResult;
  /** Throw what sendTransaction's preflight answers when the transaction would fail; nothing when it would not. */
  preflight(wire: WireTransaction, view: PreflightView): void;
  /** Execute into `slot`; null when the transaction never lands (load-time failure). */
  execute(wire: WireTransaction, loaded: LoadedAddresses, slot: number): Executed | null;
}

/** What execution asks of the chain. */
export interface ExecutionContext {
  isBlockhashValidAt(blockhash: string, c: Commitment): boolean;
  /** An account as the bank at that commitment holds it. */
  accountAt(address: string, c: Commitment): AccountSnapshot | null;
  blockAt(c: Commitment): BlockRecord;
  maxBlockhashAge: number;
}

export function nativeOf(svm: LiteSVM): NativeSvm {
  return (svm as unknown as { inner: NativeSvm }).inner;
}

export function snapshotOf(a: NativeAccount | null): AccountSnapshot | null {
  if (!a) return null;
  const lamports = a.lamports();
  const data = Uint8Array.from(a.data());
  if (lamports === 0n && data.length === 0) return null;
  return { lamports, owner: bs58.encode(a.owner()), data, executable: a.executable(), rentEpoch: a.rentEpoch() };
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

/** Return data as the RPC's simulation results give it (null when the program set none). */
function rpcReturnData(meta: NativeMeta): SimulationResult['returnData'] {
  const rd = meta.returnData();
  return rd.data().length > 0
    ? { programId: bs58.encode(rd.programId()), data: [Buffer.from(rd.data()).toString('base64'), 'base64'] }
    : null;
}

function feeOf(meta: NativeMeta, tx: WireTransaction): bigint {
  // LiteSVM reports the fee it charged only in its Debug text (`fee: 5000`); fall back to the signature fee.
  const m = /fee: ([0-9]+)/.exec(meta.toString());
  return m ? BigInt(m[1]) : LAMPORTS_PER_SIGNATURE * BigInt(tx.header.numRequiredSignatures);
}

/**
 * The -32002 error a node returns when preflight simulation fails (Agave 3.1 rpc.rs send_transaction): the
 * simulation's err, logs, units, loaded data size, return data and fee; the rest null.
 */
function preflightFailure(
  err: RpcTxError,
  sim: {
    logs?: string[];
    units?: bigint;
    loadedAccountsDataSize?: number;
    fee?: bigint | null;
    returnData?: unknown;
  } = {},
): RpcError {
  return new RpcError(RPC.SEND_TRANSACTION_PREFLIGHT_FAILURE, `Transaction simulation failed: ${txErrorMessage(err)}`, {
    accounts: null,
    err,
    fee: sim.fee ?? null,
    innerInstructions: null,
    loadedAccountsDataSize: sim.loadedAccountsDataSize ?? 0,
    loadedAddresses: null,
    logs: sim.logs ?? [],
    postBalances: null,
    postTokenBalances: null,
    preBalances: null,
    preTokenBalances: null,
    replacementBlockhash: null,
    returnData: sim.returnData ?? null,
    unitsConsumed: sim.units ?? 0n,
  });
}

/** What the executor runs on: the SVM, the chain's answers, its log. */
interface ExecState {
  readonly svm: LiteSVM;
  readonly chain: ExecutionContext;
  readonly log: Logger;
}

function getAccount(x: ExecState, address: string): AccountSnapshot | null {
  let bytes: Uint8Array;
  try {
    bytes = new PublicKey(address).toBytes();
  } catch {
    throw invalidParams('Invalid param: Invalid');
  }
  return snapshotOf(nativeOf(x.svm).getAccount(bytes));
}
function decimalsOf(x: ExecState, mint: string): number | null {
  const a = getAccount(x, mint);
  return a ? (decodeMint(a.owner, a.data)?.decimals ?? null) : null;
}

function resolve(x: ExecState, wire: WireTransaction): LoadedAddresses {
  if (wire.lookups.length === 0) return { writable: [], readonly: [] };
  try {
    return resolveLookups(wire.lookups, (key) => {
      const acct = getAccount(x, key);
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
}

function decode(bytes: Uint8Array): WireTransaction {
  try {
    return decodeWireTransaction(bytes);
  } catch (e) {
    if (isOncepayError(e))
      throw invalidParams(
        `failed to deserialize solana_transaction::versioned::VersionedTransaction: ${(e as Error).message}`,
      );
    throw e;
  }
}

function runSim(x: ExecState, bytes: Uint8Array, wire: WireTransaction, sigVerify: boolean): NativeResult {
  const n = nativeOf(x.svm);
  n.setSigverify(sigVerify);
  try {
    return wire.version === 'legacy' ? n.simulateLegacyTransaction(bytes) : n.simulateVersionedTransaction(bytes);
  } finally {
    n.setSigverify(true);
  }
}

function simulate(x: ExecState, bytes: Uint8Array, o: SimulateOptions): SimulationResult {
  const c = o.commitment ?? 'finalized';
  let wire = decode(bytes);
  let replacement: SimulationResult['replacementBlockhash'] = null;
  if (o.replaceRecentBlockhash) {
    // The commitment's bank's last blockhash, as the node's.
    const vt = VersionedTransaction.deserialize(bytes);
    const at = x.chain.blockAt(c);
    vt.message.recentBlockhash = at.blockhash;
    bytes = vt.serialize();
    wire = decode(bytes);
    replacement = { blockhash: at.blockhash, lastValidBlockHeight: at.blockHeight + x.chain.maxBlockhashAge };
  }
  const loadedAddresses = resolve(x, wire);
  const keys = allAccountKeys(wire, loadedAddresses);
  const base: SimulationResult = {
    err: null,
    logs: [],
    unitsConsumed: 0n,
    returnData: null,
    innerInstructions: [],
    postAccounts: new Map(),
    replacementBlockhash: replacement,
    fee: null,
    loadedAccountsDataSize: 0,
    preBalances: null,
    postBalances: null,
    preTokenBalances: null,
    postTokenBalances: null,
    loadedAddresses,
  };
  // A signature refusal comes before the bank runs anything: no balances (Agave's TransactionSimulationResult::new_error).
  if (o.sigVerify && !signaturesVerify(wire)) return { ...base, err: 'SignatureFailure' };
  const pre = keys.map((k) => getAccount(x, k));
  const balancesOf = (states: Array<AccountSnapshot | null>) => ({
    lamports: states.map((a) => a?.lamports ?? 0n),
    tokens: tokenBalances(states, (m) => decimalsOf(x, m) ?? 0, false),
  });
  // Not loaded (the blockhash is unknown at that bank): the balances are still collected, unchanged, from that
  // commitment's bank (a payer funded since the last finalized block has 0 there, as a node answers).
  if (!x.chain.isBlockhashValidAt(wire.recentBlockhash, c)) {
    const there = balancesOf(keys.map((k) => x.chain.accountAt(k, c)));
    return {
      ...base,
      err: 'BlockhashNotFound',
      preBalances: there.lamports,
      postBalances: there.lamports,
      preTokenBalances: there.tokens,
      postTokenBalances: there.tokens,
    };
  }
  const before = balancesOf(pre);
  const r = runSim(x, bytes, wire, o.sigVerify ?? false);
  const meta = metaOf(r);
  const err = r.err ? toRpcTxError(r.err()) : null;
  const post = new Map<string, AccountSnapshot | null>();
  if (r.postAccounts) {
    for (const pa of r.postAccounts()) post.set(bs58.encode(pa.address), snapshotOf(pa.account()));
  }
  const postAccounts = new Map<string, AccountSnapshot | null>();
  for (const a of o.accounts ?? []) postAccounts.set(a, post.has(a) ? post.get(a)! : getAccount(x, a));
  const loadedOk = err === null || isExecutionError(err);
  const fee = loadedOk ? feeOf(meta, wire) : null;
  // After a failed execution only the fee is charged (the payer is key 0).
  const postStates =
    err === null
      ? keys.map((k, i) => (post.has(k) ? post.get(k)! : pre[i]))
      : pre.map((a, i) => (i === 0 && a && fee !== null ? { ...a, lamports: a.lamports - fee } : a));
  const after = balancesOf(postStates);
  return {
    ...base,
    err,
    logs: meta.logs(),
    unitsConsumed: meta.computeUnitsConsumed(),
    returnData: rpcReturnData(meta),
    innerInstructions: rpcInnerInstructions(innerOf(meta)),
    postAccounts,
    fee,
    loadedAccountsDataSize: loadedOk ? loadedAccountsDataSize(wire, loadedAddresses, pre, (k) => getAccount(x, k)) : 0,
    preBalances: before.lamports,
    postBalances: after.lamports,
    preTokenBalances: before.tokens,
    postTokenBalances: after.tokens,
  };
}

function preflight(x: ExecState, wire: WireTransaction, view: PreflightView): void {
  // Agave 3.1 verifies signatures first and reports a failure as a failed preflight simulation (-32002).
  if (!signaturesVerify(wire)) throw preflightFailure('SignatureFailure');
  if (!view.blockhashValid) throw preflightFailure('BlockhashNotFound');
  if (view.alreadyProcessed) throw preflightFailure('AlreadyProcessed');
  if (view.landedAbove) return;
  const r = runSim(x, wire.bytes, wire, false);
  if (r.err) {
    const err = toRpcTxError(r.err());
    const meta = metaOf(r);
    const loadedOk = isExecutionError(err);
    const loadedAddrs = resolve(x, wire);
    throw preflightFailure(err, {
      logs: meta.logs(),
      units: meta.computeUnitsConsumed(),
      fee: loadedOk ? feeOf(meta, wire) : null,
      loadedAccountsDataSize: loadedOk
        ? loadedAccountsDataSize(
            wire,
            loadedAddrs,
            allAccountKeys(wire, loadedAddrs).map((k) => getAccount(x, k)),
            (k) => getAccount(x, k),
          )
        : 0,
      returnData: rpcReturnData(meta),
    });
  }
}

function execute(x: ExecState, wire: WireTransaction, loadedAddrs: LoadedAddresses, slot: number): Executed | null {
  const n = nativeOf(x.svm);
  const keys = allAccountKeys(wire, loadedAddrs);
  const pre = keys.map((k) => getAccount(x, k));
  const r = wire.version === 'legacy' ? n.sendLegacyTransaction(wire.bytes) : n.sendVersionedTransaction(wire.bytes);
  const err = r.err ? toRpcTxError(r.err()) : null;
  // Landed = executed, successfully or not (the fee is charged either way), which is what a leader puts in its
  // block; load-time failures (signature, blockhash, fee payer) never land. Asking LiteSVM's history instead
  // costs ~0.5 ms per call.
  if (err !== null && !isExecutionError(err)) {
    x.log.debug({ signature: wire.signature, err }, 'transaction dropped before execution');
    return null;
  }
  const post = keys.map((k) => getAccount(x, k));
  const meta = metaOf(r);
  const decimals = (mint: string): number => {
    // The mint is usually one of the transaction's keys: prefer its post state, then pre, then current.
    const i = keys.indexOf(mint);
    const m = i >= 0 ? (post[i] ?? pre[i]) : null;
    const d = m ? decodeMint(m.owner, m.data)?.decimals : undefined;
    return d ?? decimalsOf(x, mint) ?? 0;
  };
  const rd = meta.returnData();
  const units = meta.computeUnitsConsumed();
  const rpcMeta = buildMeta({
    keys,
    pre,
    post,
    decimalsOf: decimals,
    err,
    fee: feeOf(meta, wire),
    logs: meta.logs(),
    inner: innerOf(meta),
    computeUnits: units,
    costUnits: costUnits(
      wire,
      loadedAddrs,
      units,
      loadedAccountsDataSize(wire, loadedAddrs, pre, (k) => getAccount(x, k)),
    ),
    loaded: loadedAddrs,
    returnData: { programId: bs58.encode(rd.programId()), data: rd.data() },
  });
  const record: TxRecord = {
    signature: wire.signature,
    slot,
    wire: Buffer.from(wire.bytes).toString('base64'),
    meta: rpcMeta,
  };
  return { record, keys, pre, post, err };
}

export function createExecutor(svm: LiteSVM, chain: ExecutionContext): Executor {
  const x: ExecState = { svm, chain, log: logger('localnet.chain') };
  return {
    getAccount: (address) => getAccount(x, address),
    decimalsOf: (mint) => decimalsOf(x, mint),
    decode,
    resolve: (wire) => resolve(x, wire),
    simulate: (bytes, o) => simulate(x, bytes, o),
    preflight: (wire, view) => preflight(x, wire, view),
    execute: (wire, loaded, slot) => execute(x, wire, loaded, slot),
  };
}
