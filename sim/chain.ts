// The chain model: one straight line of blocks (no forks, as localnet), a pending slot that executes what it is
// handed, blockhashes that expire after `lifetime` blocks, finality `finalityDepth` blocks behind the tip, the
// oncepay program's execute_payout (op account created once: 6000 after that; paused 6002; short vault 6004), and
// customer token transfers. Its RPC answers as a node does, and fails as one does when the schedule armed a fault:
// a request lost before the node (`fail`), executed with its answer lost (`drop`), a send kept in a mempool that
// lands later or never (`delay`), a status asked of a node without the transaction's history (`forget`), an older
// blockhash from a lagging node (`stale`). Deterministic: no clock, no randomness.
import type { TransactionError } from '@solana/web3.js';
import type { SignatureStatus } from '../app/payout/chain';
import type { OpAccount } from '../app/payout/program';
import type { Receipt } from '../indexer/decode/receipt';
import type { Address, Signature } from '../app/types';
import type { OpId } from '../app/op-id';
import type { BaseUnits } from '../common/amount';

/** The chain calls a fault can be armed on. */
export const RPC_METHODS = [
  'send',
  'statuses',
  'blockhash',
  'expiry',
  'op',
  'history',
  'block',
  'transaction',
] as const;
export type RpcMethod = (typeof RPC_METHODS)[number];
export const RPC_FAULTS = ['fail', 'drop', 'delay', 'forget', 'stale'] as const;
export type RpcFault = (typeof RPC_FAULTS)[number];

/**
 * A chain call that failed: it decides nothing (a timeout, a 429, a dropped connection). Not an OncepayError: it
 * models the RPC node's failure as the transport sees it.
 */
export class RpcFailure extends Error {
  constructor(
    readonly method: RpcMethod,
    readonly fault: RpcFault,
    readonly executed: boolean,
  ) {
    super(`${method}: ${fault}${executed ? ' (executed)' : ''}`);
  }
}

export interface Transfer {
  ixIndex: number;
  innerIndex: number;
  source: string;
  destination: string;
  destinationOwner: string | null;
  mint: string | null;
  amount: bigint;
  references?: string[];
}

/** One execute_payout transaction, as an attempt's exact bytes describe it. */
export interface PayoutTx {
  kind: 'payout';
  signature: Signature;
  blockhash: string;
  /** The payout row it pays (its journal). */
  payoutRow: string;
  opId: OpId;
  recipient: Address;
  mint: Address;
  amount: bigint;
}

/** A customer's transaction: one or more transfers, or a failing one (lands with an error, moves nothing). */
export interface PaymentTx {
  kind: 'payment';
  signature: Signature;
  transfers: Transfer[];
  fails: boolean;
}

export type ChainTx = PayoutTx | PaymentTx;

export interface Landed {
  tx: ChainTx;
  slot: number;
  err: TransactionError | null;
  /** What moved (a payout's transfer from the vault; a payment's transfers). */
  transfers: Transfer[];
}

interface Block {
  slot: number;
  height: number;
  hash: string;
  signatures: Signature[];
}

interface OpRecord {
  account: OpAccount;
  signature: Signature;
}

export interface ChainParams {
  finalityDepth: number;
  /** Blocks a blockhash stays usable: lastValidBlockHeight = its height + lifetime. */
  lifetime: number;
  vault: bigint;
  vaultAddress: string;
  merchant: Address;
}

const custom = (code: number): TransactionError => ({ InstructionError: [0, { Custom: code }] });
export const PROGRAM_ERROR = { consumed: 6000, paused: 6002, insufficient: 6004 } as const;

/** The chain's state: the closure of createChain, as one object the functions below take. */
interface ChainState {
  params: ChainParams;
  blocks: Block[];
  byHash: Map<string, Block>;
  pendingSlot: number;
  pending: Signature[];
  skipNext: boolean;
  landed: Map<Signature, Landed>;
  ops: Map<OpId, OpRecord>;
  /** Every transaction that touched an op account (landed, with or without error), in order. */
  opHistory: Map<OpId, Signature[]>;
  balances: Map<string, bigint>;
  vault: bigint;
  paused: boolean;
  mempool: ChainTx[];
  armed: Array<{ method: RpcMethod; fault: RpcFault }>;
  /** Faults that fired, in order (the world reads them for the fault-space cells). */
  fired: Array<{ method: RpcMethod; fault: RpcFault }>;
}

const tip = (st: ChainState) => st.blocks[st.blocks.length - 1];
const finalizedHeight = (st: ChainState) => Math.max(0, tip(st).height - st.params.finalityDepth);
const finalizedSlot = (st: ChainState) => st.blocks[finalizedHeight(st)].slot;
const sealed = (st: ChainState, slot: number) => slot <= tip(st).slot;
const final = (st: ChainState, slot: number) => slot <= finalizedSlot(st);

/** The armed fault for this call, if one is (first armed, first fired); `kinds` are those this call can take. */
function take(st: ChainState, method: RpcMethod, kinds: readonly RpcFault[]): RpcFault | undefined {
  const i = st.armed.findIndex((a) => a.method === method && kinds.includes(a.fault));
  if (i < 0) return undefined;
  const [a] = st.armed.splice(i, 1);
  st.fired.push(a);
  return a.fault;
}

function failIfArmed(st: ChainState, method: RpcMethod): void {
  const f = take(st, method, ['fail', 'drop']);
  if (f) throw new RpcFailure(method, f, false);
}

/** A blockhash a transaction can still land with in the pending slot. */
function usable(st: ChainState, blockhash: string): boolean {
  const b = st.byHash.get(blockhash);
  return b !== undefined && tip(st).height + 1 <= b.height + st.params.lifetime;
}

/** execute_payout as the program runs it: the op account once (6000 after), paused 6002, short vault 6004. */
function executePayout(st: ChainState, tx: PayoutTx): Landed {
  st.opHistory.set(tx.opId, [...(st.opHistory.get(tx.opId) ?? []), tx.signature]);
  const landedWith = (err: TransactionError | null, transfers: Transfer[] = []): Landed => ({
    tx,
    slot: st.pendingSlot,
    err,
    transfers,
  });
  if (st.ops.has(tx.opId)) return landedWith(custom(PROGRAM_ERROR.consumed));
  if (st.paused) return landedWith(custom(PROGRAM_ERROR.paused));
  if (st.vault < tx.amount) return landedWith(custom(PROGRAM_ERROR.insufficient));
  st.vault -= tx.amount;
  st.balances.set(tx.recipient, (st.balances.get(tx.recipient) ?? 0n) + tx.amount);
  const { opId, recipient, mint, amount } = tx;
  const account = {
    opId,
    merchant: st.params.merchant,
    recipient,
    mint,
    amount,
    slot: BigInt(st.pendingSlot),
    bump: 255,
  };
  st.ops.set(opId, { signature: tx.signature, account });
  return landedWith(null, [
    {
      ixIndex: 0,
      innerIndex: 0,
      source: st.params.vaultAddress,
      destination: recipient,
      destinationOwner: null,
      mint,
      amount,
    },
  ]);
}

/** Run a transaction in the pending slot (a signature executes once, ever; an expired blockhash never lands). */
function execute(st: ChainState, tx: ChainTx): void {
  if (st.landed.has(tx.signature)) return;
  if (tx.kind === 'payout') {
    if (!usable(st, tx.blockhash)) return;
    st.landed.set(tx.signature, executePayout(st, tx));
  } else {
    const err = tx.fails ? custom(1) : null;
    st.landed.set(tx.signature, { tx, slot: st.pendingSlot, err, transfers: tx.fails ? [] : tx.transfers });
  }
  st.pending.push(tx.signature);
}

/** Seal the pending slot into a block (or skip it: no block, its transactions land in the next). */
function seal(st: ChainState): void {
  if (st.skipNext) {
    st.skipNext = false;
    for (const sig of st.pending) {
      const l = st.landed.get(sig)!;
      l.slot = st.pendingSlot + 1;
      const op = l.tx.kind === 'payout' ? st.ops.get(l.tx.opId) : undefined;
      if (op?.signature === sig) op.account = { ...op.account, slot: BigInt(st.pendingSlot + 1) };
    }
    st.pendingSlot++;
    return;
  }
  const height = tip(st).height + 1;
  const b: Block = { slot: st.pendingSlot, height, hash: `h${height}`, signatures: st.pending };
  st.blocks.push(b);
  st.byHash.set(b.hash, b);
  st.pending = [];
  st.pendingSlot++;
  st.mempool = st.mempool.filter((tx) => tx.kind !== 'payout' || usable(st, tx.blockhash));
}

function receiptsOf(l: Landed): Receipt[] {
  if (l.err !== null) return [];
  return l.transfers.map((t) => ({
    signature: l.tx.signature,
    slot: BigInt(l.slot),
    blockTime: null,
    ixIndex: t.ixIndex,
    innerIndex: t.innerIndex,
    program: 'spl-token' as const,
    kind: 'transferChecked' as const,
    mint: t.mint,
    source: t.source,
    destination: t.destination,
    destinationOwner: t.destinationOwner,
    amount: t.amount as BaseUnits,
    ...(t.references ? { references: [...t.references] } : {}),
  }));
}

/** The RPC as the payout executor calls it (app/payout/chain.ts PayoutChain), with the armed faults. */
function payoutRpc(st: ChainState) {
  return {
    latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
      const f = take(st, 'blockhash', ['fail', 'drop', 'stale']);
      if (f === 'fail' || f === 'drop') throw new RpcFailure('blockhash', f, false);
      const b = f === 'stale' ? st.blocks[Math.max(0, st.blocks.length - 3)] : tip(st);
      return { blockhash: b.hash, lastValidBlockHeight: BigInt(b.height + st.params.lifetime) };
    },
    /** Hand the bytes to a node. Throws when the answer is lost; the node may have executed it anyway. */
    send(tx: ChainTx): void {
      const f = take(st, 'send', ['fail', 'drop', 'delay']);
      if (f === 'fail') throw new RpcFailure('send', f, false);
      if (f === 'delay') {
        st.mempool.push(tx);
        return;
      }
      execute(st, tx);
      if (f === 'drop') throw new RpcFailure('send', f, true);
    },
    statuses(signatures: readonly Signature[]): SignatureStatus[] {
      const f = take(st, 'statuses', ['fail', 'drop', 'forget']);
      if (f === 'fail' || f === 'drop') throw new RpcFailure('statuses', f, false);
      return signatures.map((sig): SignatureStatus => {
        const l = st.landed.get(sig);
        if (!l) return { found: false };
        // A node without the history answers "not found" for what is already final.
        if (f === 'forget' && final(st, l.slot)) return { found: false };
        if (!sealed(st, l.slot)) return { found: true, settled: false, slot: BigInt(l.slot) };
        return { found: true, settled: true, slot: BigInt(l.slot), err: l.err };
      });
    },
    /** True only when the FINALIZED block height is past lastValidBlockHeight. */
    blockhashExpired(lastValidBlockHeight: bigint): boolean {
      failIfArmed(st, 'expiry');
      return BigInt(finalizedHeight(st)) > lastValidBlockHeight;
    },
    opAccount(opId: OpId, commitment: 'confirmed' | 'finalized'): OpAccount | null {
      failIfArmed(st, 'op');
      const r = st.ops.get(opId);
      if (!r) return null;
      const slot = Number(r.account.slot);
      return (commitment === 'finalized' ? final(st, slot) : sealed(st, slot)) ? r.account : null;
    },
    opAccountSignatures(opId: OpId): Array<{ signature: Signature; slot: bigint; err: TransactionError | null }> {
      failIfArmed(st, 'history');
      return (st.opHistory.get(opId) ?? [])
        .map((sig) => st.landed.get(sig)!)
        .filter((l) => sealed(st, l.slot))
        .map((l) => ({ signature: l.tx.signature, slot: BigInt(l.slot), err: l.err }));
    },
  };
}

/** The RPC as the indexer's sources call it. */
function indexerRpc(st: ChainState) {
  return {
    /** getSlot('finalized'). */
    finalizedTarget: () => finalizedSlot(st),
    /** getBlocks(start, end, 'finalized'): the slots with a block. */
    listBlocks(start: number, end: number): number[] {
      const last = Math.min(end, finalizedSlot(st));
      return st.blocks.filter((b) => b.slot >= start && b.slot <= last && b.slot > 0).map((b) => b.slot);
    },
    /**
     * getBlock(slot) decoded: the receipts of its successful transactions, in block order. An armed fault fails the
     * next read of a block that has transactions (an empty block's failure changes nothing worth finding).
     */
    blockReceipts(slot: number): Receipt[] {
      const b = st.blocks.find((x) => x.slot === slot);
      if (!b || !final(st, slot)) throw new RpcFailure('block', 'fail', false);
      if (b.signatures.length > 0) failIfArmed(st, 'block');
      return b.signatures.flatMap((sig) => receiptsOf(st.landed.get(sig)!));
    },
    /** getTransaction(signature, 'finalized'), as the webhook verifier reads it: null when not (yet) final. */
    transaction(signature: string): { meta: { err: TransactionError | null }; receipts: Receipt[] } | null {
      failIfArmed(st, 'transaction');
      const l = st.landed.get(signature as Signature);
      if (!l || !final(st, l.slot)) return null;
      return { meta: { err: l.err }, receipts: receiptsOf(l) };
    },
    /** One finalized slot's receipts (the stream's feed): null while it is not final, [] for a slot with no block. */
    finalizedSlotReceipts(slot: number): Receipt[] | null {
      const b = st.blocks.find((x) => x.slot === slot);
      if (!final(st, slot)) return null;
      return b ? b.signatures.flatMap((sig) => receiptsOf(st.landed.get(sig)!)) : [];
    },
  };
}

export function createChain(params: ChainParams) {
  const genesis: Block = { slot: 0, height: 0, hash: 'h0', signatures: [] };
  const st: ChainState = {
    params,
    blocks: [genesis],
    byHash: new Map([['h0', genesis]]),
    pendingSlot: 1,
    pending: [],
    skipNext: false,
    landed: new Map(),
    ops: new Map(),
    opHistory: new Map(),
    balances: new Map(),
    vault: params.vault,
    paused: false,
    mempool: [],
    armed: [],
    fired: [],
  };
  return {
    params,
    fired: st.fired,
    arm: (method: RpcMethod, fault: RpcFault) => void st.armed.push({ method, fault }),
    clearFaults: () => void (st.armed.length = 0),
    seal: () => seal(st),
    skipNextSlot: () => void (st.skipNext = true),
    /** Seal lifetime + 1 blocks: every blockhash handed out so far is expired (localnet's expireBlockhashesNow). */
    expireBlockhashesNow(): void {
      for (let i = 0; i <= params.lifetime; i++) seal(st);
    },
    setPaused: (p: boolean) => void (st.paused = p),
    fundVault: (amount: bigint) => void (st.vault += amount),
    vault: () => st.vault,
    finalizedSlot: () => finalizedSlot(st),
    pendingSlot: () => st.pendingSlot,
    mempoolSize: () => st.mempool.length,
    /** A transaction the mempool held lands now (if it still can), or is dropped for good. */
    mempoolStep(land: boolean): ChainTx | undefined {
      const tx = st.mempool.shift();
      if (tx && land) execute(st, tx);
      return tx;
    },
    /** A customer's wallet hands its transaction to a node (no fault of ours on its way). */
    submit: (tx: PaymentTx) => execute(st, tx),
    ...payoutRpc(st),
    ...indexerRpc(st),
    /** What the invariants read: the truth, not an RPC answer. */
    truth: {
      landed: (): ReadonlyMap<Signature, Landed> => st.landed,
      opHistory: (): ReadonlyMap<OpId, readonly Signature[]> => st.opHistory,
      balance: (a: string) => st.balances.get(a) ?? 0n,
      isFinal: (slot: number) => final(st, slot),
      receiptsOf,
    },
  };
}

export type Chain = ReturnType<typeof createChain>;
