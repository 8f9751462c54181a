// Execution: LiteSVM runs the wire bytes; this module turns its results into what a node reports (RPC meta,
// simulation results, preflight refusals). It knows no slots or blocks beyond the two questions it asks the
// chain (is this blockhash still valid, what is the tip's blockhash).
import bs58 from 'bs58';
import type { LiteSVM } from 'litesvm';
import { PublicKey, VersionedTransaction } from '@solana/web3.js';
import { OncepayError, isOncepayError } from '../common/errors';
import { logger } from '../common/log';
import { LOCALNET_CODES } from '../common/errors/codes';
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
import { LAMPORTS_PER_SIGNATURE } from './fee';
import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID } from './program-ids';
import { RPC, RpcError, invalidParams } from './rpc-error';
import { decodeMint } from './token-state';
import type { BlockRecord, TxRecord } from './types';
import {
  LoadedAddresses,
  WireTransaction,
  allAccountKeys,
  decodeWireTransaction,
  lookupTableAddresses,
  resolveLookups,
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
  fee: bigint;
}

export interface SimulateOptions {
  sigVerify?: boolean;
  replaceRecentBlockhash?: boolean;
  accounts?: string[];
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
  preflight(wire: WireTransaction, alreadyKnown: boolean): void;
  /** Execute into `slot`; null when the transaction never lands (load-time failure). */
  execute(wire: WireTransaction, loaded: LoadedAddresses, slot: number): Executed | null;
}

/** What execution asks of the chain. */
export interface ExecutionContext {
  isBlockhashValid(blockhash: string): boolean;
  tip(): BlockRecord;
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

export function createExecutor(svm: LiteSVM, chain: ExecutionContext): Executor {
  const log = logger('localnet.chain');
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

  const simulate = (bytes: Uint8Array, o: SimulateOptions): SimulationResult => {
    let wire = decode(bytes);
    let replacement: SimulationResult['replacementBlockhash'] = null;
    if (o.replaceRecentBlockhash) {
      const vt = VersionedTransaction.deserialize(bytes);
      const tip = chain.tip();
      vt.message.recentBlockhash = tip.blockhash;
      bytes = vt.serialize();
      wire = decode(bytes);
      replacement = { blockhash: tip.blockhash, lastValidBlockHeight: tip.blockHeight + chain.maxBlockhashAge };
    }
    resolve(wire);
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
    if (!chain.isBlockhashValid(wire.recentBlockhash)) return { ...empty, err: 'BlockhashNotFound' };
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

  const preflight = (wire: WireTransaction, known: boolean): void => {
    if (known) throw preflightFailure('AlreadyProcessed', [], 0n);
    if (!chain.isBlockhashValid(wire.recentBlockhash)) throw preflightFailure('BlockhashNotFound', [], 0n);
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
  };

  const execute = (wire: WireTransaction, loadedAddrs: LoadedAddresses, slot: number): Executed | null => {
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
      return null;
    }
    const post = keys.map((k) => getAccount(k));
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
    const record: TxRecord = {
      signature: wire.signature,
      slot,
      wire: Buffer.from(wire.bytes).toString('base64'),
      meta: rpcMeta,
    };
    return { record, keys, pre, post, err };
  };

  return { getAccount, decimalsOf, decode, resolve, simulate, preflight, execute };
}
