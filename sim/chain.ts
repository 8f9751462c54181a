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

/** A chain call that failed: it decides nothing (a timeout, a 429, a dropped connection). */
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

export function createChain(params: ChainParams) {
  const blocks: Block[] = [{ slot: 0, height: 0, hash: 'h0', signatures: [] }];
  const byHash = new Map<string, Block>([['h0', blocks[0]]]);
  let pendingSlot = 1;
  let pending: Signature[] = [];
  let skipNext = false;
  const landed = new Map<Signature, Landed>();
  const ops = new Map<OpId, OpRecord>();
  /** Every transaction that touched an op account (landed, with or without error), in order. */
  const opHistory = new Map<OpId, Signature[]>();
  const balances = new Map<string, bigint>();
  let vault = params.vault;
  let paused = false;
  let mempool: ChainTx[] = [];
  const armed: Array<{ method: RpcMethod; fault: RpcFault }> = [];
  /** Faults that fired, in order (the runner reads them for coverage and the trace). */
  const fired: Array<{ method: RpcMethod; fault: RpcFault }> = [];

  const tip = () => blocks[blocks.length - 1];
  const finalizedHeight = () => Math.max(0, tip().height - params.finalityDepth);
  const finalizedSlot = () => blocks[finalizedHeight()].slot;
  const pendingHeight = () => tip().height + 1;

  /** The armed fault for this call, if one is (first armed, first fired); `kinds` are those this call can take. */
  function take(method: RpcMethod, kinds: readonly RpcFault[]): RpcFault | undefined {
    const i = armed.findIndex((a) => a.method === method && kinds.includes(a.fault));
    if (i < 0) return undefined;
    const [a] = armed.splice(i, 1);
    fired.push(a);
    return a.fault;
  }
  function failIfArmed(method: RpcMethod): void {
    const f = take(method, ['fail', 'drop']);
    if (f) throw new RpcFailure(method, f, false);
  }

  function usable(blockhash: string): boolean {
    const b = byHash.get(blockhash);
    return b !== undefined && pendingHeight() <= b.height + params.lifetime;
  }

  function execute(tx: ChainTx): void {
    if (landed.has(tx.signature)) return; // a signature executes once, ever
    if (tx.kind === 'payout') {
      if (!usable(tx.blockhash)) return; // expired or unknown blockhash: the node drops it
      const history = opHistory.get(tx.opId) ?? [];
      opHistory.set(tx.opId, [...history, tx.signature]);
      let err: TransactionError | null = null;
      let transfers: Transfer[] = [];
      if (ops.has(tx.opId)) err = custom(PROGRAM_ERROR.consumed);
      else if (paused) err = custom(PROGRAM_ERROR.paused);
      else if (vault < tx.amount) err = custom(PROGRAM_ERROR.insufficient);
      else {
        vault -= tx.amount;
        balances.set(tx.recipient, (balances.get(tx.recipient) ?? 0n) + tx.amount);
        ops.set(tx.opId, {
          signature: tx.signature,
          account: {
            opId: tx.opId,
            merchant: params.merchant,
            recipient: tx.recipient,
            mint: tx.mint,
            amount: tx.amount,
            slot: BigInt(pendingSlot),
            bump: 255,
          },
        });
        transfers = [
          {
            ixIndex: 0,
            innerIndex: 0,
            source: params.vaultAddress,
            destination: tx.recipient,
            destinationOwner: null,
            mint: tx.mint,
            amount: tx.amount,
          },
        ];
      }
      landed.set(tx.signature, { tx, slot: pendingSlot, err, transfers });
    } else {
      const err = tx.fails ? custom(1) : null;
      landed.set(tx.signature, { tx, slot: pendingSlot, err, transfers: tx.fails ? [] : tx.transfers });
    }
    pending.push(tx.signature);
  }

  /** Seal the pending slot into a block (or skip it: no block, its transactions land in the next). */
  function seal(): void {
    if (skipNext) {
      skipNext = false;
      for (const s of pending) landed.get(s)!.slot = pendingSlot + 1;
      for (const s of pending) {
        const l = landed.get(s)!;
        if (l.tx.kind === 'payout' && ops.get(l.tx.opId)?.signature === s) {
          const r = ops.get(l.tx.opId)!;
          r.account = { ...r.account, slot: BigInt(pendingSlot + 1) };
        }
      }
      pendingSlot++;
      return;
    }
    const height = tip().height + 1;
    const b: Block = { slot: pendingSlot, height, hash: `h${height}`, signatures: pending };
    blocks.push(b);
    byHash.set(b.hash, b);
    pending = [];
    pendingSlot++;
    mempool = mempool.filter((tx) => tx.kind !== 'payout' || usable(tx.blockhash));
  }

  const sealed = (slot: number) => slot <= tip().slot;
  const final = (slot: number) => slot <= finalizedSlot();

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

  return {
    params,
    fired,
    arm(method: RpcMethod, fault: RpcFault): void {
      armed.push({ method, fault });
    },
    clearFaults(): void {
      armed.length = 0;
    },
    armedCount: () => armed.length,
    seal,
    skipNextSlot(): void {
      skipNext = true;
    },
    /** Seal lifetime + 1 blocks: every blockhash handed out so far is expired (localnet's expireBlockhashesNow). */
    expireBlockhashesNow(): void {
      for (let i = 0; i <= params.lifetime; i++) seal();
    },
    setPaused(p: boolean): void {
      paused = p;
    },
    paused: () => paused,
    fundVault(amount: bigint): void {
      vault += amount;
    },
    vault: () => vault,
    tipSlot: () => tip().slot,
    finalizedSlot,
    pendingSlot: () => pendingSlot,
    mempoolSize: () => mempool.length,
    /** A transaction the mempool held lands now (if it still can), or is dropped for good. */
    mempoolStep(land: boolean): ChainTx | undefined {
      const tx = mempool.shift();
      if (tx && land) execute(tx);
      return tx;
    },

    /** A customer's wallet hands its transaction to a node (no fault of ours on its way). */
    submit(tx: PaymentTx): void {
      execute(tx);
    },

    // ---- the RPC, as the payout executor calls it (app/payout/chain.ts PayoutChain) ----
    latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
      const f = take('blockhash', ['fail', 'drop', 'stale']);
      if (f === 'fail' || f === 'drop') throw new RpcFailure('blockhash', f, false);
      const b = f === 'stale' ? blocks[Math.max(0, blocks.length - 3)] : tip();
      return { blockhash: b.hash, lastValidBlockHeight: BigInt(b.height + params.lifetime) };
    },
    /** Hand the bytes to a node. Throws when the answer is lost; the node may have executed it anyway. */
    send(tx: ChainTx): void {
      const f = take('send', ['fail', 'drop', 'delay']);
      if (f === 'fail') throw new RpcFailure('send', f, false);
      if (f === 'delay') {
        mempool.push(tx);
        return;
      }
      execute(tx);
      if (f === 'drop') throw new RpcFailure('send', f, true);
    },
    statuses(signatures: readonly Signature[]): SignatureStatus[] {
      const f = take('statuses', ['fail', 'drop', 'forget']);
      if (f === 'fail' || f === 'drop') throw new RpcFailure('statuses', f, false);
      return signatures.map((s): SignatureStatus => {
        const l = landed.get(s);
        if (!l) return { found: false };
        // A node without the history answers "not found" for what is already final.
        if (f === 'forget' && final(l.slot)) return { found: false };
        if (!sealed(l.slot)) return { found: true, settled: false, slot: BigInt(l.slot) };
        return { found: true, settled: true, slot: BigInt(l.slot), err: l.err };
      });
    },
    /** True only when the FINALIZED block height is past lastValidBlockHeight. */
    blockhashExpired(lastValidBlockHeight: bigint): boolean {
      failIfArmed('expiry');
      return BigInt(finalizedHeight()) > lastValidBlockHeight;
    },
    opAccount(opId: OpId, commitment: 'confirmed' | 'finalized'): OpAccount | null {
      failIfArmed('op');
      const r = ops.get(opId);
      if (!r) return null;
      const slot = Number(r.account.slot);
      return (commitment === 'finalized' ? final(slot) : sealed(slot)) ? r.account : null;
    },
    opAccountSignatures(opId: OpId): Array<{ signature: Signature; slot: bigint; err: TransactionError | null }> {
      failIfArmed('history');
      return (opHistory.get(opId) ?? [])
        .map((s) => landed.get(s)!)
        .filter((l) => sealed(l.slot))
        .map((l) => ({ signature: l.tx.signature, slot: BigInt(l.slot), err: l.err }));
    },

    // ---- the RPC, as the indexer's sources call it ----
    /** getSlot('finalized'). */
    finalizedTarget(): number {
      return finalizedSlot();
    },
    /** getBlocks(start, end, 'finalized'): the slots with a block. */
    listBlocks(start: number, end: number): number[] {
      const last = Math.min(end, finalizedSlot());
      return blocks.filter((b) => b.slot >= start && b.slot <= last && b.slot > 0).map((b) => b.slot);
    },
    /**
     * getBlock(slot) decoded: the receipts of its successful transactions, in block order. An armed fault fails the
     * next read of a block that has transactions (an empty block's failure changes nothing worth finding).
     */
    blockReceipts(slot: number): Receipt[] {
      const b = blocks.find((x) => x.slot === slot);
      if (!b || !final(slot)) throw new RpcFailure('block', 'fail', false);
      if (b.signatures.length > 0) failIfArmed('block');
      return b.signatures.flatMap((s) => receiptsOf(landed.get(s)!));
    },
    /** getTransaction(signature, 'finalized'), as the webhook verifier reads it: null when not (yet) final. */
    transaction(signature: string): { meta: { err: TransactionError | null }; receipts: Receipt[] } | null {
      failIfArmed('transaction');
      const l = landed.get(signature as Signature);
      if (!l || !final(l.slot)) return null;
      return { meta: { err: l.err }, receipts: receiptsOf(l) };
    },
    /** The finalized blocks' receipts above `after` up to `through`, slot by slot (the stream's feed). */
    finalizedSlotReceipts(slot: number): Receipt[] | null {
      const b = blocks.find((x) => x.slot === slot);
      if (!final(slot)) return null;
      return b ? b.signatures.flatMap((s) => receiptsOf(landed.get(s)!)) : [];
    },

    // ---- what the invariants read (the truth, not an RPC answer) ----
    truth: {
      landed: (): ReadonlyMap<Signature, Landed> => landed,
      opHistory: (): ReadonlyMap<OpId, readonly Signature[]> => opHistory,
      op: (opId: OpId) => ops.get(opId),
      balance: (a: string) => balances.get(a) ?? 0n,
      isFinal: final,
      receiptsOf,
    },
  };
}

export type Chain = ReturnType<typeof createChain>;
