// Ledger records → getTransaction / getBlock entries (the encoding work is in ../encode.ts).
import { encodeMeta, encodeTransaction, parsedAccountKeys, TxEncoding } from '../encode';
import { RPC, RpcError, invalidParams } from '../rpc-error';
import type { TxRecord } from '../types';
import { decodeWireTransaction, WireTransaction } from '../wire';

const wireCache = new WeakMap<TxRecord, WireTransaction>();

export function wireOf(r: TxRecord): WireTransaction {
  let w = wireCache.get(r);
  if (!w) wireCache.set(r, (w = decodeWireTransaction(Buffer.from(r.wire, 'base64'))));
  return w;
}

export function encodingOf(c: Record<string, unknown>, fallback: TxEncoding): TxEncoding {
  const e = c.encoding ?? fallback;
  if (e === 'json' || e === 'jsonParsed' || e === 'base64' || e === 'base58') return e;
  throw invalidParams(
    `Invalid params: unknown variant \`${String(e)}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\``,
  );
}

export function maxVersionOf(c: Record<string, unknown>): number | undefined {
  const v = c.maxSupportedTransactionVersion;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    throw invalidParams('Invalid params: invalid maxSupportedTransactionVersion');
  return v;
}

function checkVersion(w: WireTransaction, maxVersion: number | undefined): void {
  if (w.version === 0 && (maxVersion === undefined || maxVersion < 0)) {
    throw new RpcError(
      RPC.UNSUPPORTED_TRANSACTION_VERSION,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
}

/** `{transaction, meta, version?}` as in getBlock's `transactions` (full details). */
export function encodeTxWithMeta(
  r: TxRecord,
  encoding: TxEncoding,
  maxVersion: number | undefined,
  /** getBlock with `rewards: false`: a node then answers each transaction's `meta.rewards` as null. */
  showRewards = true,
): Record<string, unknown> {
  const w = wireOf(r);
  checkVersion(w, maxVersion);
  const meta = encodeMeta(r.meta, w, encoding) as Record<string, unknown>;
  const out: Record<string, unknown> = {
    transaction: encodeTransaction(w, r.meta.loadedAddresses, encoding),
    meta: showRewards ? meta : { ...meta, rewards: null },
  };
  if (maxVersion !== undefined) out.version = w.version;
  return out;
}

/** getBlock with transactionDetails "accounts": keys and balances only. */
export function encodeTxAccounts(r: TxRecord, maxVersion: number | undefined): Record<string, unknown> {
  const w = wireOf(r);
  checkVersion(w, maxVersion);
  const m = r.meta;
  const out: Record<string, unknown> = {
    transaction: { accountKeys: parsedAccountKeys(w, m.loadedAddresses), signatures: w.signatures },
    meta: {
      err: m.err,
      fee: m.fee,
      postBalances: m.postBalances,
      postTokenBalances: m.postTokenBalances,
      preBalances: m.preBalances,
      preTokenBalances: m.preTokenBalances,
      status: m.status,
    },
  };
  if (maxVersion !== undefined) out.version = w.version;
  return out;
}
