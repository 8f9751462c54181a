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
  /**
   * Several op accounts' data in one call (getMultipleAccounts: at most MAX_ACCOUNTS_PER_CALL), one entry per pda
   * in its order: null when absent or only pre-funded (not owned by `programId`), as getOpAccount reads it, with
   * the same checks on the answer; decoding (decodeOpAccount) is left to each reader, so a malformed account
   * fails only its own read. An answer that cannot be checked fails the whole call.
   */
  opAccountsData(
    pdas: Address[],
    programId: Address,
    commitment: 'confirmed' | 'finalized',
  ): Promise<Array<Uint8Array | null>>;
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
   * The op-account reads (getOpAccount, opAccountsData) over a lean JSON-RPC POST to the connection's endpoint
   * (json-rpc.ts) instead of through web3.js (default true). The Connection's own httpHeaders and fetch are not
   * reachable from here: headers go in `httpHeaders`, and a request silent for `requestTimeoutMs` (default 30 s)
   * fails. false: read through the Connection (e.g. one given by an SDK user, whose transport we do not know).
   */
  leanOpRead?: boolean;
  httpHeaders?: Record<string, string>;
  requestTimeoutMs?: number;
}

/** getMultipleAccounts accepts at most this many accounts per call. */
export const MAX_ACCOUNTS_PER_CALL = 100;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const malformed = (method: string, why: string) =>
  new OncepayError(RPC_CODES.MALFORMED_RESPONSE, `${method}: malformed result (${why})`, { method });

/** A JSON-RPC `{ context, value }` result's value; throws when there is none. */
function resultValue(method: string, result: unknown): unknown {
  if (result === null || typeof result !== 'object' || !('value' in result)) throw malformed(method, 'no value');
  return (result as { value: unknown }).value;
}

/** One account of a getAccountInfo / getMultipleAccounts answer: see parseOpAccountInfo (its data, not decoded). */
function parseOpAccountValue(method: string, value: unknown, programId: Address): Buffer | null {
  const bad = (why: string) => malformed(method, why);
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
  return Buffer.from(data[0], 'base64');
}

/**
 * A getAccountInfo `result` (base64 encoding) as getOpAccount reads it: null when absent or only pre-funded (not
 * owned by the program), the decoded op account otherwise. Every field used is checked (the owner a valid
 * address, the data base64 as asked); anything else throws, and the executor treats the read as failed.
 */
export function parseOpAccountInfo(result: unknown, programId: Address): OpAccount | null {
  const data = parseOpAccountValue('getAccountInfo', resultValue('getAccountInfo', result), programId);
  return data && decodeOpAccount(data);
}

/**
 * A getMultipleAccounts `result` (base64 encoding) for `count` op accounts, as opAccountsData reads it: one entry
 * per account asked, each checked as parseOpAccountInfo checks one (not decoded). A value that is not a list of
 * `count` entries, or any entry that cannot be checked, throws: the whole answer is refused.
 */
export function parseOpAccountsInfo(result: unknown, programId: Address, count: number): Array<Buffer | null> {
  const value = resultValue('getMultipleAccounts', result);
  if (!Array.isArray(value)) throw malformed('getMultipleAccounts', 'value is not a list');
  if (value.length !== count) {
    throw malformed('getMultipleAccounts', `${value.length} accounts for ${count} asked`);
  }
  return value.map((v) => parseOpAccountValue('getMultipleAccounts', v, programId));
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
    async opAccountsData(pdas, programId, commitment) {
      if (pdas.length === 0) return [];
      if (pdas.length > MAX_ACCOUNTS_PER_CALL)
        throw new OncepayError(RPC_CODES.BATCH_TOO_LARGE, `at most ${MAX_ACCOUNTS_PER_CALL} accounts a call`);
      const keys = pdas.map((pda) => new PublicKey(pda));
      if (!rpc) {
        const infos = await connection.getMultipleAccountsInfo(keys, commitment);
        if (infos.length !== pdas.length) {
          throw malformed('getMultipleAccounts', `${infos.length} accounts for ${pdas.length} asked`);
        }
        const program = new PublicKey(programId);
        // Not owned by the program: pre-funded lamports only, not created yet.
        return infos.map((info) => (info && info.owner.equals(program) ? info.data : null));
      }
      const result = await rpc('getMultipleAccounts', [
        keys.map((k) => k.toBase58()),
        { encoding: 'base64', commitment },
      ]);
      return parseOpAccountsInfo(result, programId, pdas.length);
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
