// A sealed block's transaction record (wire bytes + the RPC's json meta) → the Geyser protobuf shapes
// (SubscribeUpdateTransactionInfo: solana.storage Transaction + TransactionStatusMeta), as a validator's
// Yellowstone plugin would send it.
import type { SubscribeUpdateTransactionInfo } from '@triton-one/yellowstone-grpc';
import bs58 from 'bs58';
import { PublicKey } from '@solana/web3.js';
import type { TxRecord } from '../types';
import { decodeWireTransaction, type WireTransaction } from '../wire';
import { encodeTxError } from './tx-error';

const key = (k: string): Uint8Array => new PublicKey(k).toBytes();

/** The wire transaction of a record, parsed once and kept (records are immutable once sealed). */
const wireCache = new WeakMap<TxRecord, WireTransaction>();
export function wireOfRecord(rec: TxRecord): WireTransaction {
  let w = wireCache.get(rec);
  if (!w) wireCache.set(rec, (w = decodeWireTransaction(Buffer.from(rec.wire, 'base64'))));
  return w;
}

export function transactionInfo(rec: TxRecord, index: number): SubscribeUpdateTransactionInfo {
  const w = wireOfRecord(rec);
  const m = rec.meta;
  const tokenBalance = (t: (typeof m.preTokenBalances)[number]) => ({
    accountIndex: t.accountIndex,
    mint: t.mint,
    owner: t.owner,
    programId: t.programId,
    uiTokenAmount: {
      uiAmount: t.uiTokenAmount.uiAmount ?? 0,
      decimals: t.uiTokenAmount.decimals,
      amount: t.uiTokenAmount.amount,
      uiAmountString: t.uiTokenAmount.uiAmountString,
    },
  });
  return {
    signature: bs58.decode(rec.signature),
    isVote: false,
    index: String(index),
    transaction: {
      signatures: w.signatures.map((s) => bs58.decode(s)),
      message: {
        header: { ...w.header },
        accountKeys: w.staticKeys.map(key),
        recentBlockhash: bs58.decode(w.recentBlockhash),
        instructions: w.instructions.map((ix) => ({
          programIdIndex: ix.programIdIndex,
          accounts: Uint8Array.from(ix.accounts),
          data: ix.data,
        })),
        versioned: w.version === 0,
        addressTableLookups: w.lookups.map((l) => ({
          accountKey: key(l.accountKey),
          writableIndexes: Uint8Array.from(l.writableIndexes),
          readonlyIndexes: Uint8Array.from(l.readonlyIndexes),
        })),
      },
    },
    meta: {
      err: m.err === null ? undefined : { err: encodeTxError(m.err) },
      fee: m.fee.toString(),
      preBalances: m.preBalances.map(String),
      postBalances: m.postBalances.map(String),
      innerInstructions: m.innerInstructions.map((g) => ({
        index: g.index,
        instructions: g.instructions.map((ix) => ({
          programIdIndex: ix.programIdIndex,
          accounts: Uint8Array.from(ix.accounts),
          data: bs58.decode(ix.data),
          stackHeight: ix.stackHeight ?? undefined,
        })),
      })),
      innerInstructionsNone: false,
      logMessages: m.logMessages,
      logMessagesNone: false,
      preTokenBalances: m.preTokenBalances.map(tokenBalance),
      postTokenBalances: m.postTokenBalances.map(tokenBalance),
      rewards: [],
      loadedWritableAddresses: m.loadedAddresses.writable.map(key),
      loadedReadonlyAddresses: m.loadedAddresses.readonly.map(key),
      returnData: m.returnData
        ? { programId: key(m.returnData.programId), data: Buffer.from(m.returnData.data[0], 'base64') }
        : undefined,
      returnDataNone: m.returnData === undefined,
      computeUnitsConsumed: m.computeUnitsConsumed.toString(),
    },
  };
}
