// What the executor needs from the chain, as a small interface, and its implementation over web3.js v1
// `Connection`. Every call may fail (timeouts, 429s, dropped responses): the executor treats a failure as
// "unknown", never as "did not happen".
import { Commitment, Connection, PublicKey, TransactionError } from '@solana/web3.js';
import { OpAccount, decodeOpAccount } from './program';
import { OncepayError, RPC_CODES } from '../../common/errors';
import { jsonRpc } from './json-rpc';
import { Address, Signature } from '../types';

export type SignatureStatus =
  | { found: false }
  /** Seen but not yet at the commitment we settle on (e.g. only `processed`). */
  | { found: true; settled: false; slot: bigint }
  | { found: true; settled: true; slot: bigint; err: TransactionError | null };

export interface PayoutChain {
  latestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: bigint }>;
  /** Hand the exact bytes to a node. Resolves when a node accepted them; may throw even if it did. */
  sendRawTransaction(bytes: Uint8Array): Promise<void>;
  signatureStatuses(signatures: Signature[]): Promise<SignatureStatus[]>;
  /**
   * True only when no fork can include a transaction with this lifetime any more: the FINALIZED block height is
   * past lastValidBlockHeight. (A `confirmed` height past it would still leave a lower fork that could.)
   */
  blockhashExpired(lifetime: { blockhash: string; lastValidBlockHeight: bigint }): Promise<boolean>;
  /**
   * The op account, decoded; null when absent (or only pre-funded with lamports). Read at `finalized` to prove
   * absence after expiry; at `confirmed` after an OperationAlreadyConsumed that we saw at `confirmed`.
   */
  getOpAccount(pda: Address, programId: Address, commitment: 'confirmed' | 'finalized'): Promise<OpAccount | null>;
  /** Transactions that touched the op account (at confirmed), oldest first (to name the attempt that created it). */
  opAccountSignatures(
    pda: Address,
  ): Promise<Array<{ signature: Signature; slot: bigint; err: TransactionError | null }>>;
}

export interface ConnectionChainOptions {
  connection: Connection;
  /** The commitment at which an attempt counts as landed: `confirmed` (default) or `finalized`. */
  settleCommitment?: Extract<Commitment, 'confirmed' | 'finalized'>;
  /**
   * Ask for statuses beyond the node's recent status cache (default true). Nodes without full history answer
   * "not found" for old signatures: the op account then decides (see run-payout.ts).
   */
  searchTransactionHistory?: boolean;
  /**
   * The op-account read (getOpAccount: once per payout) over a lean JSON-RPC POST to the connection's endpoint
   * (json-rpc.ts) instead of through web3.js (default true). The Connection's own httpHeaders and fetch are not
   * reachable from here: headers go in `httpHeaders`, and a request silent for `requestTimeoutMs` (default 30 s)
   * fails. false: read through the Connection (e.g. one given by an SDK user, whose transport we do not know).
   */
  leanOpRead?: boolean;
  httpHeaders?: Record<string, string>;
  requestTimeoutMs?: number;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A getAccountInfo `result` (base64 encoding) as getOpAccount reads it: null when absent or only pre-funded (not
 * owned by the program), the decoded op account otherwise. Every field used is checked (the owner a valid
 * address, the data base64 as asked); anything else throws, and the executor treats the read as failed.
 */
export function parseOpAccountInfo(result: unknown, programId: Address): OpAccount | null {
  const bad = (why: string) =>
    new OncepayError(RPC_CODES.MALFORMED_RESPONSE, `getAccountInfo: malformed result (${why})`, {
      method: 'getAccountInfo',
    });
  if (result === null || typeof result !== 'object' || !('value' in result)) throw bad('no value');
  const value = (result as { value: unknown }).value;
  if (value === null) return null;
  if (typeof value !== 'object') throw bad('value is not an object');
  const { owner, data } = value as { owner?: unknown; data?: unknown };
  if (typeof owner !== 'string') throw bad('owner is not a string');
  let ownerKey: PublicKey;
  try {
    ownerKey = new PublicKey(owner);
  } catch {
    throw bad('owner is not an address');
  }
  if (!ownerKey.equals(new PublicKey(programId))) return null; // pre-funded lamports only: not created yet
  if (!Array.isArray(data) || data.length !== 2 || data[1] !== 'base64' || typeof data[0] !== 'string') {
    throw bad('data is not [base64 text, "base64"]');
  }
  if (data[0].length % 4 !== 0 || !BASE64.test(data[0])) throw bad('data is not base64');
  return decodeOpAccount(Buffer.from(data[0], 'base64'));
}

const RANK: Record<string, number> = { processed: 0, confirmed: 1, finalized: 2 };

export function createConnectionChain(opts: ConnectionChainOptions): PayoutChain {
  const { connection } = opts;
  const settle = opts.settleCommitment ?? 'confirmed';
  const rpc =
    opts.leanOpRead === false
      ? undefined
      : jsonRpc({ url: connection.rpcEndpoint, headers: opts.httpHeaders, timeoutMs: opts.requestTimeoutMs ?? 30_000 });
  return {
    async latestBlockhash() {
      const r = await connection.getLatestBlockhash('confirmed');
      return { blockhash: r.blockhash, lastValidBlockHeight: BigInt(r.lastValidBlockHeight) };
    },
    async sendRawTransaction(bytes) {
      // Preflight off: a simulation failure is not proof of anything, and the landed error (e.g.
      // OperationAlreadyConsumed) is what we read back. No client-side retries: the executor rebroadcasts.
      await connection.sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 });
    },
    async signatureStatuses(signatures) {
      if (signatures.length === 0) return [];
      const r = await connection.getSignatureStatuses(signatures, {
        searchTransactionHistory: opts.searchTransactionHistory ?? true,
      });
      return r.value.map((s): SignatureStatus => {
        if (!s) return { found: false };
        const slot = BigInt(s.slot);
        const level = RANK[s.confirmationStatus ?? 'processed'] ?? 0;
        // confirmations === null means rooted (finalized) on nodes that omit confirmationStatus.
        const reached = s.confirmations === null ? 2 : level;
        if (reached < RANK[settle]) return { found: true, settled: false, slot };
        return { found: true, settled: true, slot, err: s.err };
      });
    },
    async blockhashExpired({ lastValidBlockHeight }) {
      // Not isBlockhashValid: one node's "unknown blockhash" (lagging, or another fork) proves nothing.
      const h = await connection.getBlockHeight('finalized');
      return BigInt(h) > lastValidBlockHeight;
    },
    async getOpAccount(pda, programId, commitment) {
      if (!rpc) {
        const info = await connection.getAccountInfo(new PublicKey(pda), commitment);
        if (!info) return null;
        if (!info.owner.equals(new PublicKey(programId))) return null; // pre-funded lamports only: not created yet
        return decodeOpAccount(info.data);
      }
      const result = await rpc('getAccountInfo', [new PublicKey(pda).toBase58(), { encoding: 'base64', commitment }]);
      return parseOpAccountInfo(result, programId);
    },
    async opAccountSignatures(pda) {
      // confirmed: after an OperationAlreadyConsumed seen at confirmed, the winner may not be finalized yet.
      const sigs = await connection.getSignaturesForAddress(new PublicKey(pda), { limit: 1000 }, 'confirmed');
      return sigs
        .map((s) => ({ signature: s.signature as Signature, slot: BigInt(s.slot), err: s.err }))
        .sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0));
    },
  };
}
